//! A runnable example's host side as data, for examples of several launches: what it launches
//! is owned in one place, a [`Problem`]: the kernels, their launch shapes, the argument buffers
//! (inputs uploaded by the example's `setup`, outputs poisoned before every launch) and which
//! buffers each launch writes. An [`Example`] (kernels, setup, check) registers with the
//! `phaser` CLI like a [`crate::Runnable`] ([`crate::problems!`]), and because its launches are
//! data, tools can rerun them: `phaser run` and `phaser diff`, and beside them (Phaser's
//! examples crate) GPU tests, `bench_stream` and the mutation suite, which launches a mutant in
//! place of one launch's kernel ([`Problem::with_kernel`]) under chosen simulator settings
//! ([`simulate_problem`]). The gallery's examples are written this way, against this public API
//! only, so one can be copied into a user crate (`examples/user-crate` compiles two of them).
//!
//! This module is the only place the harness touches [`Device`]'s buffer API.

mod example;
mod random;

pub use example::{run, Example, Outcome, Run};
pub use random::{random_f32, random_u32, POISON_U32};
/// How big a run is (what an example's setup takes).
pub use crate::registry::Size;

use crate::codegen::ir::ParamKind;
use crate::runtime::sim::{ExploreReport, SimConfig, SimReport};
use crate::runtime::{
    Arg, Buffer, Device, Elem, LaunchConfig, LaunchReport, RuntimeError, Stream, Swizzle, TensorMap,
};
use crate::runtime::elem::{F8E4M3, F8E5M2};
use crate::Kernel;
use std::any::Any;
use std::cell::RefCell;
use std::marker::PhantomData;
use std::rc::Rc;
use std::time::Duration;

type Result<T> = std::result::Result<T, RuntimeError>;

/// A launch in flight on a stream (the runtime's guard; this module's `Launch` is a problem's).
pub type StreamLaunch<'a> = crate::runtime::Launch<'a>;

/// A device buffer of one of the element types a [`Problem`] holds.
#[allow(missing_docs)]
pub enum DeviceBuffer {
    U32(Buffer<u32>),
    F32(Buffer<f32>),
    BF16(Buffer<half::bf16>),
    E4M3(Buffer<F8E4M3>),
    E5M2(Buffer<F8E5M2>),
}

/// A downloaded output.
#[derive(Clone, Debug, PartialEq)]
#[allow(missing_docs)]
pub enum HostData {
    U32(Vec<u32>),
    F32(Vec<f32>),
    BF16(Vec<half::bf16>),
    E4M3(Vec<F8E4M3>),
    E5M2(Vec<F8E5M2>),
}

/// The element types a [`Problem`]'s buffers hold (what [`DeviceBuffer`] and [`HostData`] wrap).
#[allow(missing_docs)]
pub trait Data: Elem {
    fn wrap_buffer(b: Buffer<Self>) -> DeviceBuffer;
    fn buffer(b: &DeviceBuffer) -> Option<&Buffer<Self>>;
    fn buffer_mut(b: &mut DeviceBuffer) -> Option<&mut Buffer<Self>>;
    fn wrap_host(v: Vec<Self>) -> HostData;
    fn host(h: &HostData) -> Option<&[Self]>;
}

macro_rules! data {
    ($t:ty, $v:ident) => {
        impl Data for $t {
            fn wrap_buffer(b: Buffer<Self>) -> DeviceBuffer {
                DeviceBuffer::$v(b)
            }
            fn buffer_mut(b: &mut DeviceBuffer) -> Option<&mut Buffer<Self>> {
                match b {
                    DeviceBuffer::$v(b) => Some(b),
                    _ => None,
                }
            }
            fn buffer(b: &DeviceBuffer) -> Option<&Buffer<Self>> {
                match b {
                    DeviceBuffer::$v(b) => Some(b),
                    _ => None,
                }
            }
            fn wrap_host(v: Vec<Self>) -> HostData {
                HostData::$v(v)
            }
            fn host(h: &HostData) -> Option<&[Self]> {
                match h {
                    HostData::$v(v) => Some(v),
                    _ => None,
                }
            }
        }
    };
}
data!(u32, U32);
data!(f32, F32);
data!(half::bf16, BF16);
data!(F8E4M3, E4M3);
data!(F8E5M2, E5M2);

impl DeviceBuffer {
    fn arg(&self) -> Arg<'_> {
        match self {
            DeviceBuffer::U32(b) => Arg::buffer(b),
            DeviceBuffer::F32(b) => Arg::buffer(b),
            DeviceBuffer::BF16(b) => Arg::buffer(b),
            DeviceBuffer::E4M3(b) => Arg::buffer(b),
            DeviceBuffer::E5M2(b) => Arg::buffer(b),
        }
    }
    fn fill_bits(&mut self, dev: &Device, bits: u64) -> Result<()> {
        match self {
            DeviceBuffer::U32(b) => dev.fill(b, <u32 as Elem>::from_bits(bits)),
            DeviceBuffer::F32(b) => dev.fill(b, <f32 as Elem>::from_bits(bits)),
            DeviceBuffer::BF16(b) => dev.fill(b, <half::bf16 as Elem>::from_bits(bits)),
            DeviceBuffer::E4M3(b) => dev.fill(b, <F8E4M3 as Elem>::from_bits(bits)),
            DeviceBuffer::E5M2(b) => dev.fill(b, <F8E5M2 as Elem>::from_bits(bits)),
        }
    }
    fn arg_mut(&mut self) -> Arg<'_> {
        match self {
            DeviceBuffer::U32(b) => Arg::buffer_mut(b),
            DeviceBuffer::F32(b) => Arg::buffer_mut(b),
            DeviceBuffer::BF16(b) => Arg::buffer_mut(b),
            DeviceBuffer::E4M3(b) => Arg::buffer_mut(b),
            DeviceBuffer::E5M2(b) => Arg::buffer_mut(b),
        }
    }
    fn download(&self, dev: &Device) -> Result<HostData> {
        Ok(match self {
            DeviceBuffer::U32(b) => HostData::U32(dev.download(b)?),
            DeviceBuffer::F32(b) => HostData::F32(dev.download(b)?),
            DeviceBuffer::BF16(b) => HostData::BF16(dev.download(b)?),
            DeviceBuffer::E4M3(b) => HostData::E4M3(dev.download(b)?),
            DeviceBuffer::E5M2(b) => HostData::E5M2(dev.download(b)?),
        })
    }
}

impl HostData {
    /// Fold into an FNV-1a digest: every element's bits as 8 little-endian bytes.
    fn fold(&self, mut h: u64) -> u64 {
        let mut eat = |bits: u64| {
            for b in bits.to_le_bytes() {
                h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
            }
        };
        match self {
            HostData::U32(v) => v.iter().for_each(|x| eat(x.to_bits())),
            HostData::F32(v) => v.iter().for_each(|x| eat(Elem::to_bits(*x))),
            HostData::BF16(v) => v.iter().for_each(|x| eat(Elem::to_bits(*x))),
            HostData::E4M3(v) => v.iter().for_each(|x| eat(Elem::to_bits(*x))),
            HostData::E5M2(v) => v.iter().for_each(|x| eat(Elem::to_bits(*x))),
        }
        h
    }
}

/// A buffer of a [`Problem`], typed.
pub struct BufferId<T> {
    index: usize,
    _t: PhantomData<fn() -> T>,
}

impl<T> Clone for BufferId<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for BufferId<T> {}

/// A tensor map of a [`Problem`] (its index among the problem's maps).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MapId(usize);

/// A scalar argument.
#[derive(Clone, Copy, Debug, PartialEq)]
#[allow(missing_docs)]
pub enum Scalar {
    U32(u32),
    F32(f32),
}

/// One argument of a [`Launch`], naming the problem's buffers and maps.
#[derive(Clone, Copy, Debug, PartialEq)]
#[allow(missing_docs)]
pub enum LaunchArg {
    Buffer(usize),
    TensorMap(usize),
    Scalar(Scalar),
}

impl<T> From<BufferId<T>> for LaunchArg {
    fn from(b: BufferId<T>) -> Self {
        LaunchArg::Buffer(b.index)
    }
}
impl From<MapId> for LaunchArg {
    fn from(m: MapId) -> Self {
        LaunchArg::TensorMap(m.0)
    }
}
impl From<u32> for LaunchArg {
    fn from(v: u32) -> Self {
        LaunchArg::Scalar(Scalar::U32(v))
    }
}
impl From<f32> for LaunchArg {
    fn from(v: f32) -> Self {
        LaunchArg::Scalar(Scalar::F32(v))
    }
}

/// One kernel launch of a problem.
pub struct Launch {
    /// The kernel launched.
    pub kernel: Kernel,
    /// Its grid, block and shared memory.
    pub config: LaunchConfig,
    /// Its arguments, in the kernel's parameter order.
    pub args: Vec<LaunchArg>,
    /// The buffers this launch writes: poisoned before it, downloaded after it, in this order.
    pub outputs: Vec<usize>,
}

struct Slot {
    buffer: DeviceBuffer,
    /// Bits of the poison value of an output buffer (`None` for inputs).
    poison: Option<u64>,
}

/// Everything an example launches on one device, from one seed.
pub struct Problem {
    /// The seed the inputs were drawn from (shown in details so a failure can be replayed).
    pub seed: u64,
    /// The launches, run in order (an example may sweep several kernels over one input).
    pub launches: Vec<Launch>,
    buffers: Vec<Slot>,
    maps: Vec<TensorMap>,
    /// What the example's check needs besides the outputs (host inputs, shapes).
    host: Box<dyn Any>,
    /// What [`Problem::expected`] computed, by type: a check's reference, once per problem.
    expected: RefCell<Vec<Rc<dyn Any>>>,
}

impl Problem {
    /// An empty problem whose inputs were drawn from `seed`.
    pub fn new(seed: u64) -> Problem {
        Problem {
            seed,
            launches: Vec::new(),
            buffers: Vec::new(),
            maps: Vec::new(),
            host: Box::new(()),
            expected: RefCell::new(Vec::new()),
        }
    }

    /// Upload an input.
    pub fn input<T: Data>(&mut self, dev: &Device, data: &[T]) -> Result<BufferId<T>> {
        let b = dev.upload(data)?;
        Ok(self.push(b, None))
    }

    /// An output of `len` elements, filled with `poison` before every launch that writes it,
    /// so an element the kernel failed to write cannot pass for a result.
    pub fn output<T: Data>(&mut self, dev: &Device, len: usize, poison: T) -> Result<BufferId<T>> {
        let b = dev.upload(&vec![poison; len])?;
        Ok(self.push(b, Some(poison.to_bits())))
    }

    fn push<T: Data>(&mut self, b: Buffer<T>, poison: Option<u64>) -> BufferId<T> {
        self.buffers.push(Slot { buffer: T::wrap_buffer(b), poison });
        BufferId { index: self.buffers.len() - 1, _t: PhantomData }
    }

    /// A tensor map over one of the problem's buffers (see [`Device::tensor_map`]).
    pub fn tensor_map<T: Data>(
        &mut self,
        dev: &Device,
        buf: BufferId<T>,
        dims: &[u64],
        box_dims: &[u32],
        swizzle: Swizzle,
    ) -> Result<MapId> {
        let m = dev.tensor_map(self.buffer(buf), dims, box_dims, swizzle)?;
        self.maps.push(m);
        Ok(MapId(self.maps.len() - 1))
    }

    /// Add a launch of `kernel` writing `outputs`; returns its index.
    pub fn launch(
        &mut self,
        kernel: Kernel,
        config: LaunchConfig,
        args: impl IntoIterator<Item = LaunchArg>,
        outputs: impl IntoIterator<Item = LaunchArg>,
    ) -> usize {
        let outputs = outputs
            .into_iter()
            .map(|o| match o {
                LaunchArg::Buffer(i) if self.buffers[i].poison.is_some() => i,
                other => panic!("{other:?} is not an output buffer of this problem (make it with `Problem::output`)"),
            })
            .collect();
        self.launches.push(Launch { kernel, config, args: args.into_iter().collect(), outputs });
        self.launches.len() - 1
    }

    /// Keep what the check needs (read back with [`Problem::host`]).
    pub fn set_host<H: Any>(&mut self, host: H) {
        self.host = Box::new(host);
        self.expected.get_mut().clear();
    }

    /// The host data `setup` kept; a wrong type is a bug in the example.
    pub fn host<H: Any>(&self) -> &H {
        self.host
            .downcast_ref()
            .unwrap_or_else(|| panic!("the problem's host data is not a {}", std::any::type_name::<H>()))
    }

    /// What a check compares the outputs with, computed by `reference` the first time a check
    /// asks for a `T` and kept for the problem's life. A check runs more than once on one
    /// problem (the suite reruns it on every output with a bit flipped, to show it can fail),
    /// and an f64 reference GEMM costs far more than the comparison. `T` names the value: one
    /// `T` per problem, so give each kind of reference its own type.
    pub fn expected<T: Any>(&self, reference: impl FnOnce() -> T) -> Rc<T> {
        let found = self.expected.borrow().iter().find_map(|v| v.clone().downcast::<T>().ok());
        found.unwrap_or_else(|| {
            let v = Rc::new(reference());
            self.expected.borrow_mut().push(v.clone());
            v
        })
    }

    /// The device buffer `id` names.
    pub fn buffer<T: Data>(&self, id: BufferId<T>) -> &Buffer<T> {
        T::buffer(&self.buffers[id.index].buffer).expect("a BufferId is typed")
    }

    /// The device buffer `id` names, to write (e.g. re-poison it by a device copy).
    pub fn buffer_mut<T: Data>(&mut self, id: BufferId<T>) -> &mut Buffer<T> {
        T::buffer_mut(&mut self.buffers[id.index].buffer).expect("a BufferId is typed")
    }

    /// Download buffer `id` as it stands.
    pub fn download<T: Data>(&self, dev: &Device, id: BufferId<T>) -> Result<Vec<T>> {
        dev.download(self.buffer(id))
    }

    /// The index of the launch of the kernel named `name`.
    pub fn launch_of(&self, name: &str) -> Option<usize> {
        self.launches.iter().position(|l| l.kernel.name() == name)
    }

    /// Keep launch `index` only (the mutation suite simulates one kernel at a time).
    pub fn only_launch(mut self, index: usize) -> Problem {
        let l = self.launches.swap_remove(index);
        self.launches = vec![l];
        self
    }

    /// Launch `kernel` in place of launch `index`'s kernel (a mutant of it, same parameters).
    pub fn with_kernel(mut self, index: usize, kernel: Kernel) -> Problem {
        self.launches[index].kernel = kernel;
        self
    }

    fn args(&self, launch: &Launch) -> Vec<Arg<'_>> {
        launch
            .args
            .iter()
            .map(|a| match *a {
                LaunchArg::Buffer(i) => self.buffers[i].buffer.arg(),
                LaunchArg::TensorMap(i) => Arg::TensorMap(&self.maps[i]),
                LaunchArg::Scalar(Scalar::U32(v)) => Arg::scalar(v),
                LaunchArg::Scalar(Scalar::F32(v)) => Arg::scalar(v),
            })
            .collect()
    }

    fn poison_outputs(&mut self, dev: &Device, index: usize) -> Result<()> {
        for &o in &self.launches[index].outputs {
            let slot = &mut self.buffers[o];
            let poison = slot.poison.expect("outputs are poisoned");
            slot.buffer.fill_bits(dev, poison)?;
        }
        Ok(())
    }

    /// Launch `index` as it stands: no poisoning, no download (a benchmark's timed loop).
    pub fn launch_only(&self, dev: &Device, index: usize) -> Result<LaunchReport> {
        let l = &self.launches[index];
        dev.launch(&l.kernel, l.config, &self.args(l))
    }

    /// Queue launch `index` on `stream` as it stands (no poisoning, no download) and return
    /// its guard: a buffer the kernel may write is passed exclusively, as a stream launch needs.
    pub fn launch_on<'a>(&'a mut self, stream: &'a Stream, index: usize) -> Result<StreamLaunch<'a>> {
        /// A buffer's borrow while the arguments are made: not yet lent, lent shared (any
        /// number of times), or lent exclusively (once).
        enum Lent<'b> {
            Free(&'b mut Slot),
            Shared(&'b Slot),
            Exclusive,
        }
        let l = &self.launches[index];
        let mut lent: Vec<Lent> = self.buffers.iter_mut().map(Lent::Free).collect();
        let mut args = Vec::with_capacity(l.args.len());
        for (pos, a) in l.args.iter().enumerate() {
            args.push(match *a {
                LaunchArg::Buffer(i) => {
                    let writes = l
                        .kernel
                        .params()
                        .get(pos)
                        .is_some_and(|p| matches!(p.kind, ParamKind::Global { mutable: true, .. }));
                    match (std::mem::replace(&mut lent[i], Lent::Exclusive), writes) {
                        (Lent::Free(slot), true) => slot.buffer.arg_mut(),
                        (Lent::Free(slot), false) => {
                            let slot: &Slot = slot;
                            lent[i] = Lent::Shared(slot);
                            slot.buffer.arg()
                        }
                        (Lent::Shared(slot), false) => {
                            lent[i] = Lent::Shared(slot);
                            slot.buffer.arg()
                        }
                        (Lent::Shared(_), true) | (Lent::Exclusive, _) => {
                            return Err(RuntimeError::Config(format!(
                                "launch {index} (`{}`) passes buffer {i} twice, once to be written",
                                l.kernel.name()
                            )))
                        }
                    }
                }
                LaunchArg::TensorMap(i) => Arg::TensorMap(&self.maps[i]),
                LaunchArg::Scalar(Scalar::U32(v)) => Arg::scalar(v),
                LaunchArg::Scalar(Scalar::F32(v)) => Arg::scalar(v),
            });
        }
        stream.launch(&l.kernel, l.config, args)
    }
}

/// What one launch left behind.
pub struct LaunchOutput {
    /// `(buffer index, contents)` of each output, in the launch's order.
    data: Vec<(usize, HostData)>,
    /// Device time of the launch (GPU).
    pub elapsed: Option<Duration>,
    /// The simulator's report (simulator).
    pub sim: Option<SimReport>,
}

/// The outputs of every launch of a problem, in launch order.
pub struct Outputs {
    /// What each launch left behind, in launch order.
    pub launches: Vec<LaunchOutput>,
}

impl Outputs {
    /// What launch `launch` wrote into `buf`.
    pub fn get<T: Data>(&self, launch: usize, buf: BufferId<T>) -> &[T] {
        let (_, d) = self.launches[launch]
            .data
            .iter()
            .find(|(i, _)| *i == buf.index)
            .unwrap_or_else(|| panic!("buffer {} is not an output of launch {launch}", buf.index));
        T::host(d).expect("a BufferId is typed")
    }

    /// FNV-1a over the bits of every output of every launch, in order: equal digests on the
    /// GPU and in the simulator (same seed) mean bit-identical outputs (`phaser diff`).
    pub fn digest(&self) -> u64 {
        self.launches.iter().flat_map(|l| &l.data).fold(0xcbf2_9ce4_8422_2325, |h, (_, d)| d.fold(h))
    }

    /// Flip the lowest bit of the first element of output `output` of launch `launch`: a
    /// test's way to show that an example's check looks at every output it should.
    pub fn corrupt(&mut self, launch: usize, output: usize) {
        match &mut self.launches[launch].data[output].1 {
            HostData::U32(v) => v[0] ^= 1,
            HostData::F32(v) => v[0] = f32::from_bits(v[0].to_bits() ^ 1),
            HostData::BF16(v) => v[0] = half::bf16::from_bits(v[0].to_bits() ^ 1),
            HostData::E4M3(v) => v[0] = F8E4M3::from_bits(F8E4M3::to_bits(&v[0]) ^ 1),
            HostData::E5M2(v) => v[0] = F8E5M2::from_bits(F8E5M2::to_bits(&v[0]) ^ 1),
        }
    }

    /// How many outputs launch `launch` wrote.
    pub fn output_count(&self, launch: usize) -> usize {
        self.launches[launch].data.len()
    }

    /// Device time of the last timed launch.
    pub fn elapsed(&self) -> Option<Duration> {
        self.launches.iter().rev().find_map(|l| l.elapsed)
    }
}

/// Run every launch of `p` in order: poison its outputs, launch, download its outputs.
pub fn run_problem(dev: &Device, p: &mut Problem) -> Result<Outputs> {
    let mut launches = Vec::with_capacity(p.launches.len());
    for i in 0..p.launches.len() {
        p.poison_outputs(dev, i)?;
        let r = p.launch_only(dev, i)?;
        let l = &p.launches[i];
        let data = l.outputs.iter().map(|&o| Ok((o, p.buffers[o].buffer.download(dev)?))).collect::<Result<_>>()?;
        launches.push(LaunchOutput { data, elapsed: r.elapsed, sim: r.sim });
    }
    Ok(Outputs { launches })
}

/// Simulate every launch of `p` under `sc` and return the simulator's full reports, findings
/// included (where [`run_problem`] would turn an error finding into a `RuntimeError`).
pub fn simulate_problem(dev: &Device, p: &mut Problem, sc: &SimConfig) -> Result<Vec<SimReport>> {
    let mut reports = Vec::with_capacity(p.launches.len());
    for i in 0..p.launches.len() {
        p.poison_outputs(dev, i)?;
        let l = &p.launches[i];
        reports.push(dev.simulate_with(&l.kernel, l.config, &p.args(l), sc)?);
    }
    Ok(reports)
}

/// Explore every launch of `p` exhaustively (`Device::explore`, under `dev`'s simulator
/// settings), each from its poisoned outputs.
pub fn explore_problem(dev: &Device, p: &mut Problem) -> Result<Vec<ExploreReport>> {
    let mut reports = Vec::with_capacity(p.launches.len());
    for i in 0..p.launches.len() {
        p.poison_outputs(dev, i)?;
        let l = &p.launches[i];
        reports.push(dev.explore(&l.kernel, l.config, &p.args(l))?);
    }
    Ok(reports)
}
