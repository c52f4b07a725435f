//! Nearest-name suggestions for diagnostics ("did you mean ...?").

/// Levenshtein distance between two strings (by chars).
pub fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The candidate closest to `name`, if it is close enough to be a plausible typo.
/// A candidate that ends with `name`'s last segment (same op, other namespace) also counts.
pub fn nearest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let last = name.rsplit('.').next().unwrap_or(name);
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        let mut d = distance(name, c);
        if c.rsplit('.').next() == Some(last) && !last.is_empty() {
            d = d.min(2);
        }
        if best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, c));
        }
    }
    let limit = (name.len() / 3).max(2);
    best.filter(|(d, _)| *d <= limit).map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn typo() {
        assert_eq!(
            nearest("ptx.mbarrier.try_wiat", ["ptx.mbarrier.try_wait", "ptx.mbarrier.init"]),
            Some("ptx.mbarrier.try_wait")
        );
        assert_eq!(nearest("zzz", ["ptx.mbarrier.init"]), None);
    }
}
