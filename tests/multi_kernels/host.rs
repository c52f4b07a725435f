//! The host side of the kernels' handoff, shared by the simulator's tests and the GPU's: which
//! device holds the tile and the flag, the peer mappings the other one uses, and the group
//! launch of a consumer and the producer (simulated or run: the caller's `go`).

use super::N;
use phaser::{Arg, Buffer, Device, GroupLaunch, Kernel, LaunchConfig, Swizzle};

/// Whose memory holds the tile and its flag; the other device reaches them through peer
/// mappings made for it.
#[derive(Clone, Copy, Debug)]
pub enum TileOn {
    /// The producer writes them through mappings (`produce`'s `tile`, `flag`).
    Consumer,
    /// The consumer reads them through mappings (a bulk copy or TMA from a peer's tile).
    Producer,
}

/// How the consumer's kernel takes the tile: as a buffer, or through a tensor map over it.
#[derive(Clone, Copy, Debug)]
pub enum TileArg {
    Buffer,
    TensorMap,
}

/// One handoff's buffers: the tile and flag (on the device `TileOn` names) and the consumer's
/// `out`.
pub struct Handoff<'d> {
    pub producer: &'d Device,
    pub consumer: &'d Device,
    pub tile: Buffer<u32>,
    pub flag: Buffer<u32>,
    pub out: Buffer<u32>,
    on: TileOn,
}

impl<'d> Handoff<'d> {
    /// Peer access for the device that reaches the other's memory, a tile of `N` words and
    /// one flag where `on` says, `out` on the consumer's device.
    pub fn new(producer: &'d Device, consumer: &'d Device, on: TileOn) -> Handoff<'d> {
        let home = match on {
            TileOn::Consumer => {
                producer.enable_peer_access(consumer).unwrap();
                consumer
            }
            TileOn::Producer => {
                consumer.enable_peer_access(producer).unwrap();
                producer
            }
        };
        let (tile, flag) = (home.alloc::<u32>(N as usize).unwrap(), home.alloc::<u32>(1).unwrap());
        let out = consumer.alloc::<u32>(N as usize).unwrap();
        Handoff { producer, consumer, tile, flag, out, on }
    }

    /// `go` (`simulate_group`, `launch_group`) on the consumer's launch of `kc` (`(tile, flag,
    /// out)`, the tile as `tile_arg` says) and then the producer's of `kp` (`(tile, flag)`),
    /// one block of `N` threads each.
    pub fn run<R>(
        &mut self,
        kp: &Kernel,
        kc: &Kernel,
        tile_arg: TileArg,
        go: impl FnOnce(Vec<GroupLaunch<'_>>) -> R,
    ) -> R {
        let (sp, sc) = (self.producer.stream().unwrap(), self.consumer.stream().unwrap());
        let cfg = LaunchConfig::linear(1, N);
        let (dims, boxed) = ([N as u64, 1], [N, 1]);
        let (tile, flag) = (&self.tile, &self.flag);
        match self.on {
            TileOn::Consumer => {
                let (tile_view, flag_view) = (tile.peer(self.producer).unwrap(), flag.peer(self.producer).unwrap());
                let map;
                let tile_in = match tile_arg {
                    TileArg::Buffer => Arg::buffer(tile),
                    TileArg::TensorMap => {
                        map = self.consumer.tensor_map(tile, &dims, &boxed, Swizzle::None).unwrap();
                        Arg::TensorMap(&map)
                    }
                };
                go(vec![
                    GroupLaunch::new(&sc, kc, cfg, [tile_in, Arg::buffer(flag), Arg::buffer_mut(&mut self.out)]),
                    GroupLaunch::new(&sp, kp, cfg, [Arg::from(&tile_view), Arg::from(&flag_view)]),
                ])
            }
            TileOn::Producer => {
                let (tile_view, flag_view) = (tile.peer(self.consumer).unwrap(), flag.peer(self.consumer).unwrap());
                let map;
                let tile_in = match tile_arg {
                    TileArg::Buffer => Arg::from(&tile_view),
                    TileArg::TensorMap => {
                        map = self.consumer.tensor_map_peer(&tile_view, &dims, &boxed, Swizzle::None).unwrap();
                        Arg::TensorMap(&map)
                    }
                };
                go(vec![
                    GroupLaunch::new(&sc, kc, cfg, [tile_in, Arg::from(&flag_view), Arg::buffer_mut(&mut self.out)]),
                    GroupLaunch::new(&sp, kp, cfg, [Arg::buffer(tile), Arg::buffer(flag)]),
                ])
            }
        }
    }

    /// What the consumer wrote to `out`.
    pub fn out(&self) -> Vec<u32> {
        self.consumer.download(&self.out).unwrap()
    }
}
