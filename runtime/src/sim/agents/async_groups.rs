//! A thread's `cp.async` and bulk (TMA store) groups: ops of the open group, and per committed
//! group the ops still in flight.

#[derive(Default, Clone)]
pub struct Groups {
    pub open: u32,
    pub committed: Vec<u32>,
    /// Committed groups below this index are complete.
    pub first_pending: usize,
}

impl Groups {
    pub fn commit(&mut self) {
        let open = std::mem::take(&mut self.open);
        self.committed.push(open);
    }

    /// An op of group `group` (the open one when `group == committed.len()`) completed.
    pub fn complete(&mut self, group: usize) {
        if group < self.committed.len() {
            self.committed[group] -= 1;
        } else {
            self.open -= 1;
        }
    }

    /// Whether `wait_group n` may return: PTX waits until at most the `n` most recent
    /// committed groups are pending and *every older group is complete* (a recent group
    /// completing early does not let an older one off).
    pub fn retired(&mut self, n: u32) -> bool {
        while self.first_pending < self.committed.len() && self.committed[self.first_pending] == 0 {
            self.first_pending += 1;
        }
        self.is_retired(n)
    }

    /// `retired`, without remembering how far the complete groups go (for a caller that only
    /// asks, such as the explorer deciding which warps can run).
    pub fn is_retired(&self, n: u32) -> bool {
        let complete = self.committed[self.first_pending.min(self.committed.len())..].iter().take_while(|&&c| c == 0);
        self.first_pending + complete.count() >= self.committed.len().saturating_sub(n as usize)
    }
}

/// Per thread: its `cp.async` groups and its bulk groups.
#[derive(Default, Clone)]
pub struct ThreadGroups {
    pub cp_async: Groups,
    pub bulk: Groups,
}

#[cfg(test)]
mod tests {
    use super::Groups;

    fn groups(committed: &[u32]) -> Groups {
        Groups { open: 0, committed: committed.to_vec(), first_pending: 0 }
    }

    #[test]
    fn wait_group_needs_every_group_older_than_the_n_most_recent() {
        // Groups oldest first, ops still in flight per group.
        assert!(!groups(&[1, 0]).retired(1), "the older group is still pending");
        let mut g = groups(&[0, 1]);
        assert!(g.retired(1));
        assert_eq!(g.first_pending, 1);
        assert!(!groups(&[0, 1]).retired(0));
        assert!(groups(&[0, 0]).retired(0));
        assert!(groups(&[]).retired(0));
        assert!(groups(&[2, 1, 1]).retired(3));
    }
}
