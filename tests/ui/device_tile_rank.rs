#[phaser::device]
fn first(t: Tile<f32, N>, r: Registers<f32, 9>) -> f32 {
    t[0][0]
}
fn main() {}
