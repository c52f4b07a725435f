pub mod seeds;
