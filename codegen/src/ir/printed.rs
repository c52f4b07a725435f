//! Text printed from a finished kernel (its PTX), kept beside it.
//!
//! A finished `Kernel` cannot change, so neither can what was printed from it: each
//! text is printed once per set of printer options and handed out again, with no comparison of
//! IR. The IR does not know the printer: the options are the key, in whatever type the printer
//! uses (a key of another type never matches).

use std::any::Any;
use std::fmt;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// A key with its printed text.
type Keyed = (Box<dyn Any + Send + Sync>, Arc<str>);

#[derive(Default)]
pub struct Printed {
    /// The text printed with the printer's default options (the common case: no lock).
    default: OnceLock<Arc<str>>,
    /// Texts printed with other options, beside their keys.
    keyed: Mutex<Vec<Keyed>>,
    /// How many texts were printed and kept.
    prints: AtomicU32,
}

impl Printed {
    /// The text for the default options: the kept one, or what `print` returns (then kept).
    pub fn default_or<E>(&self, print: impl FnOnce() -> Result<Arc<str>, E>) -> Result<Arc<str>, E> {
        if let Some(text) = self.default.get() {
            return Ok(text.clone());
        }
        let printed = print()?;
        let mut kept = false;
        let text = self.default.get_or_init(|| {
            kept = true;
            printed
        });
        if kept {
            self.prints.fetch_add(1, Ordering::Relaxed);
        }
        Ok(text.clone())
    }

    /// The text for options `key`: the kept one, or what `print` returns (then kept).
    pub fn keyed_or<K, E>(&self, key: &K, print: impl FnOnce() -> Result<Arc<str>, E>) -> Result<Arc<str>, E>
    where
        K: Any + PartialEq + Clone + Send + Sync,
    {
        // Held while printing: another thread asking for the same options waits for this text.
        let mut keyed = self.keyed.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, text)) = keyed.iter().find(|(k, _)| k.downcast_ref::<K>() == Some(key)) {
            return Ok(text.clone());
        }
        let text = print()?;
        keyed.push((Box::new(key.clone()), text.clone()));
        self.prints.fetch_add(1, Ordering::Relaxed);
        Ok(text)
    }

    /// How many texts were printed (1 after any number of launches with the same options).
    pub fn prints(&self) -> u32 {
        self.prints.load(Ordering::Relaxed)
    }
}

impl fmt::Debug for Printed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Printed {{ prints: {} }}", self.prints())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, PartialEq)]
    struct Opts(u32);

    #[test]
    fn each_text_is_printed_once_and_keys_of_another_type_never_match() {
        let p = Printed::default();
        let calls = AtomicU32::new(0);
        let print = |s: &str| {
            calls.fetch_add(1, Ordering::Relaxed);
            Ok::<Arc<str>, ()>(s.into())
        };
        let d = p.default_or(|| print("default")).unwrap();
        assert!(Arc::ptr_eq(&d, &p.default_or(|| print("again")).unwrap()));
        let a = p.keyed_or(&Opts(1), || print("one")).unwrap();
        assert!(Arc::ptr_eq(&a, &p.keyed_or(&Opts(1), || print("again")).unwrap()));
        assert_eq!(&*p.keyed_or(&Opts(2), || print("two")).unwrap(), "two");
        // The same bits in another type are another key.
        assert_eq!(&*p.keyed_or(&1u32, || print("u32")).unwrap(), "u32");
        assert_eq!(p.prints(), 4);
        assert_eq!(calls.load(Ordering::Relaxed), 4);
        // A failed print keeps nothing.
        assert_eq!(p.keyed_or(&Opts(3), || Err::<Arc<str>, ()>(())), Err(()));
        assert_eq!(&*p.keyed_or(&Opts(3), || print("three")).unwrap(), "three");
        assert_eq!(p.prints(), 5);
    }
}
