//! A disk cache of the GEMM choice per (device name, shape, B layout): one file per key under
//! the user's cache (`gemm_choice/` in `phaser::runtime::cuda::user_cache_dir`), holding the
//! chosen configuration's kernel name. What [`ChoiceCache::record`] writes (the model's
//! choice, or one a measurement found faster) is what [`ChoiceCache::choose`] returns for that
//! device and shape. An entry counts only if it names a current candidate
//! (`gemm_choice::choice_candidates` or the measured `decode_candidates`) that can run the shape: a stale name, a corrupt or
//! unreadable file is the model's choice again, rewritten.

use crate::gemm::{BLayout, GemmConfig, GemmShape};
use crate::gemm_choice::{can_run, choice_candidates, decode_candidates, score, GemmChoice};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The cache's directory: one subdirectory per device, one file per shape and layout.
#[derive(Clone, Debug)]
pub struct ChoiceCache {
    dir: PathBuf,
}

impl ChoiceCache {
    pub fn new(dir: impl Into<PathBuf>) -> ChoiceCache {
        ChoiceCache { dir: dir.into() }
    }
    /// The cache in the user's cache directory (`None` without `XDG_CACHE_HOME` or `HOME`).
    pub fn user() -> Option<ChoiceCache> {
        phaser::runtime::cuda::user_cache_dir(|n| std::env::var_os(n)).map(|d| ChoiceCache::new(d.join("gemm_choice")))
    }
    pub fn dir(&self) -> &Path {
        &self.dir
    }
    /// The entry's file: the device name with every character but ASCII letters, digits, `-`
    /// and `.` as `_` (so any name stays one directory inside the cache).
    pub fn path(&self, device: &str, shape: &GemmShape, layout: BLayout) -> PathBuf {
        let dev: String =
            device.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '.' { c } else { '_' }).collect();
        let dev = if dev.trim_matches('.').is_empty() { format!("_{dev}") } else { dev };
        self.dir.join(dev).join(format!("{shape}_{}.txt", layout.name()))
    }
    /// The recorded choice, if its entry names a candidate that can run `shape`, scored on
    /// `sm_count` SMs.
    pub fn lookup(&self, device: &str, sm_count: u32, shape: &GemmShape, layout: BLayout) -> Option<GemmChoice> {
        let text = std::fs::read_to_string(self.path(device, shape, layout)).ok()?;
        let name = text.trim();
        let config =
            choice_candidates(layout).into_iter().chain(decode_candidates(layout)).find(|c| c.kernel_name() == name)?;
        can_run(&config, shape, sm_count).then(|| score(config, shape, sm_count))
    }
    /// Record `config` as the choice for `device` at `shape` (written whole, then renamed
    /// into place: a concurrent reader sees the old entry or the new one).
    pub fn record(&self, device: &str, shape: &GemmShape, layout: BLayout, config: &GemmConfig) -> std::io::Result<()> {
        let path = self.path(device, shape, layout);
        let parent = path.parent().expect("an entry is inside the cache");
        std::fs::create_dir_all(parent)?;
        let mut tmp = tempfile::NamedTempFile::new_in(parent)?;
        writeln!(tmp, "{}", config.kernel_name())?;
        tmp.persist(&path).map_err(|e| e.error)?;
        Ok(())
    }
    /// The recorded choice, or the model's (`GemmConfig::choose`), recorded. A cache that
    /// cannot be written still gives the model's choice; the error comes with it.
    pub fn choose(
        &self,
        device: &str,
        sm_count: u32,
        shape: &GemmShape,
        layout: BLayout,
    ) -> (GemmChoice, Option<std::io::Error>) {
        if let Some(c) = self.lookup(device, sm_count, shape, layout) {
            return (c, None);
        }
        let c = GemmConfig::choose(shape, layout, sm_count);
        let err = self.record(device, shape, layout, &c.config).err();
        (c, err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const H200: &str = "NVIDIA H200";

    #[test]
    fn a_miss_records_the_models_choice_and_a_hit_returns_it() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ChoiceCache::new(dir.path());
        let shape = GemmShape::new(64, 4096, 4096);
        let model = GemmConfig::choose(&shape, BLayout::KMajor, 132);
        assert_eq!(cache.lookup(H200, 132, &shape, BLayout::KMajor), None);
        let (c, err) = cache.choose(H200, 132, &shape, BLayout::KMajor);
        assert!(err.is_none(), "{err:?}");
        assert_eq!(c, model);
        let path = cache.path(H200, &shape, BLayout::KMajor);
        assert_eq!(path, dir.path().join("NVIDIA_H200").join("64x4096x4096_kmajor.txt"));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), format!("{}\n", model.config.kernel_name()));
        assert_eq!(cache.lookup(H200, 132, &shape, BLayout::KMajor), Some(model));
        // Another layout and another device are other entries.
        assert_eq!(cache.lookup(H200, 132, &shape, BLayout::NMajor), None);
        assert_eq!(cache.lookup("NVIDIA H100", 132, &shape, BLayout::KMajor), None);
    }

    #[test]
    fn a_recorded_choice_wins_over_the_model() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ChoiceCache::new(dir.path());
        let shape = GemmShape::new(4096, 4096, 4096);
        let model = GemmConfig::choose(&shape, BLayout::KMajor, 132);
        let other = choice_candidates(BLayout::KMajor).into_iter().find(|c| *c != model.config).unwrap();
        cache.record(H200, &shape, BLayout::KMajor, &other).unwrap();
        let (c, err) = cache.choose(H200, 132, &shape, BLayout::KMajor);
        assert!(err.is_none());
        assert_eq!(c, score(other, &shape, 132), "the recorded configuration, with its model numbers");
    }

    #[test]
    fn stale_corrupt_or_unrunnable_entries_are_the_models_choice_rewritten() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ChoiceCache::new(dir.path());
        // K = 136 is 3 blocks: 8 slices cannot run it.
        let shape = GemmShape::new(64, 4096, 136);
        let model = GemmConfig::choose(&shape, BLayout::KMajor, 132);
        let eight = choice_candidates(BLayout::KMajor).into_iter().find(|c| c.split_k == 8).unwrap();
        let path = cache.path(H200, &shape, BLayout::KMajor);
        for entry in ["phaser_gemm_no_such_config".to_string(), "\u{0}\u{ff}garbage".into(), eight.kernel_name()] {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &entry).unwrap();
            assert_eq!(cache.lookup(H200, 132, &shape, BLayout::KMajor), None, "{entry:?}");
            assert_eq!(cache.choose(H200, 132, &shape, BLayout::KMajor).0, model, "{entry:?}");
            assert_eq!(std::fs::read_to_string(&path).unwrap().trim(), model.config.kernel_name(), "rewritten");
        }
    }

    /// A measured decode choice (split-K reduced in the kernel, a depth the model never picks)
    /// is what a lookup returns once recorded.
    #[test]
    fn a_recorded_decode_candidate_is_looked_up() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ChoiceCache::new(dir.path());
        let shape = GemmShape::new(64, 4096, 4096);
        let fix = decode_candidates(BLayout::KMajor)
            .into_iter()
            .find(|c| c.reduce == crate::gemm::SplitReduce::InKernel && c.split_k == 4 && c.block_n == 64)
            .unwrap();
        assert!(!choice_candidates(BLayout::KMajor).contains(&fix), "not a model candidate");
        cache.record(H200, &shape, BLayout::KMajor, &fix).unwrap();
        assert_eq!(
            std::fs::read_to_string(cache.path(H200, &shape, BLayout::KMajor)).unwrap().trim(),
            fix.kernel_name()
        );
        assert_eq!(cache.lookup(H200, 132, &shape, BLayout::KMajor).map(|c| c.config), Some(fix));
    }

    /// A recorded reduction by every slice on the 64-row tile is looked up where its work units
    /// fit in one wave, and is the model's choice rewritten on a GPU too small for them (its
    /// slices would wait for each other forever).
    #[test]
    fn a_recorded_every_slice_choice_needs_one_wave() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ChoiceCache::new(dir.path());
        let shape = GemmShape::new(64, 4096, 4096);
        let every = decode_candidates(BLayout::KMajor)
            .into_iter()
            .find(|c| {
                c.reduce == crate::gemm::SplitReduce::EverySlice
                    && c.split_k == 8
                    && c.block_n == 256
                    && c.consumers == 1
            })
            .unwrap();
        assert_eq!(every.block_m(), 64);
        cache.record(H200, &shape, BLayout::KMajor, &every).unwrap();
        // 16 tiles x 8 slices = 128 units: one wave on 132 SMs, not on 100.
        assert_eq!(cache.lookup(H200, 132, &shape, BLayout::KMajor).map(|c| c.config), Some(every));
        assert_eq!(cache.lookup(H200, 100, &shape, BLayout::KMajor), None);
        assert_eq!(
            cache.choose(H200, 100, &shape, BLayout::KMajor).0,
            GemmConfig::choose(&shape, BLayout::KMajor, 100)
        );
    }

    #[test]
    fn any_device_name_stays_one_directory_inside_the_cache() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ChoiceCache::new(dir.path());
        let shape = GemmShape::new(1, 8, 8);
        for name in ["../../etc", "/abs/path", "..", ".", "", "a/b\\c"] {
            let p = cache.path(name, &shape, BLayout::KMajor);
            let rel = p.strip_prefix(dir.path()).unwrap();
            let parts: Vec<_> = rel.components().collect();
            assert_eq!(parts.len(), 2, "{name:?}: {p:?}");
            assert!(matches!(parts[0], std::path::Component::Normal(_)), "{name:?}: {p:?}");
        }
    }

    #[test]
    fn an_unwritable_cache_still_chooses_and_says_why() {
        let dir = tempfile::tempdir().unwrap();
        // The cache's directory is a file: no entry can be created under it.
        let file = dir.path().join("not_a_dir");
        std::fs::write(&file, "x").unwrap();
        let cache = ChoiceCache::new(&file);
        let shape = GemmShape::new(64, 4096, 4096);
        let (c, err) = cache.choose(H200, 132, &shape, BLayout::NMajor);
        assert_eq!(c, GemmConfig::choose(&shape, BLayout::NMajor, 132));
        assert!(err.is_some());
    }
}
