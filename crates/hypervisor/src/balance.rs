//! Load-balancing decisions of the EL2 scheduler, as plain functions over the number of
//! runnable vCPUs per physical CPU (host-tested; `arch::sched` gathers the numbers and
//! moves the vCPUs).
//!
//! Two moments balance: a CPU whose time slice ended *pushes* waiting vCPUs to the least
//! loaded CPUs ([`push_target`]), and a CPU with nothing to run *steals* one from the most
//! loaded CPU ([`steal_victim`]). Both move a vCPU only when that narrows the gap: the
//! source must have at least two runnable vCPUs more than the destination, so a move never
//! just swaps which CPU is the busier one (and two CPUs never pass a vCPU back and forth).

/// Runnable vCPUs of each physical CPU, `None` for a CPU that is not online.
pub type Loads<'a> = &'a [Option<usize>];

/// Whether moving one vCPU from a CPU with `from` runnable vCPUs to one with `to` makes the
/// two more equal.
pub fn worth_moving(from: usize, to: usize) -> bool {
    from >= to.saturating_add(2)
}

/// Where CPU `me` should push one of its waiting vCPUs: the least loaded online CPU (the
/// lowest index among equals) when the move is [`worth_moving`]; `None` otherwise.
pub fn push_target(loads: Loads<'_>, me: usize) -> Option<usize> {
    let mine = loads.get(me).copied().flatten()?;
    let (target, load) = loads
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != me)
        .filter_map(|(i, l)| l.map(|l| (i, l)))
        .min_by_key(|&(i, l)| (l, i))?;
    worth_moving(mine, load).then_some(target)
}

/// Which CPU an idle (or under-loaded) CPU `me` should steal a waiting vCPU from: the most
/// loaded online CPU (the lowest index among equals) when the move is [`worth_moving`].
pub fn steal_victim(loads: Loads<'_>, me: usize) -> Option<usize> {
    let mine = loads.get(me).copied().flatten()?;
    let (victim, load) = loads
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != me)
        .filter_map(|(i, l)| l.map(|l| (i, l)))
        .min_by_key(|&(i, l)| (usize::MAX - l, i))?;
    worth_moving(load, mine).then_some(victim)
}

/// One push from `me` if it is worth it ([`push_target`]): records the move in `loads` and
/// returns the target. A slice end of `me` calls this until it returns `None`.
pub fn push_once(loads: &mut [Option<usize>], me: usize) -> Option<usize> {
    let t = push_target(loads, me)?;
    loads[me] = loads[me].map(|l| l - 1);
    loads[t] = loads[t].map(|l| l + 1);
    Some(t)
}

/// When a CPU pushes next: at most once per interval, as Linux's `rq->next_balance`. A CPU
/// leaves its vCPU at every slice end but also at every yield or block; counting the loads
/// of all CPUs (one queue lock each) on each of those made a switch between two vCPUs that
/// yield to each other cost ~460 instructions more. Real slice ends are a full slice apart,
/// so an interval of half a slice skips none of them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PushClock {
    /// The counter value from which the next push may happen (0: at once).
    next: u64,
}

impl PushClock {
    /// A clock that allows a push at once.
    pub const fn new() -> Self {
        Self { next: 0 }
    }

    /// Whether the CPU pushes now (counter value `now`); if so, the next push waits until
    /// `interval` has passed.
    pub fn due(&mut self, now: u64, interval: u64) -> bool {
        if now < self.next {
            return false;
        }
        self.next = now.saturating_add(interval);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Pushes happen at most once per interval, whatever the times of the calls, and the
    /// first call after an interval has passed always pushes.
    #[test]
    fn push_clock_once_per_interval() {
        let mut c = PushClock::new();
        assert!(c.due(1000, 100), "the first call pushes");
        assert!(!c.due(1000, 100), "a yield right after does not");
        assert!(!c.due(1099, 100));
        assert!(c.due(1100, 100), "an interval later it does");
        assert!(c.due(5000, 100), "and after a long idle time at once");
        assert!(!c.due(5050, 100));
    }

    proptest! {
        /// Over any increasing call times, two pushes are at least an interval apart, and a
        /// call an interval or more after the last push pushes.
        #[test]
        fn push_clock_spacing(gaps in proptest::collection::vec(0u64..300, 1..64)) {
            let mut c = PushClock::new();
            let (mut now, mut last) = (0u64, None::<u64>);
            for g in gaps {
                now += g;
                let pushed = c.due(now, 100);
                match last {
                    Some(l) => prop_assert_eq!(pushed, now >= l + 100),
                    None => prop_assert!(pushed),
                }
                if pushed {
                    last = Some(now);
                }
            }
        }
    }

    /// Pushes from `me` until none is worth it; the targets in order.
    fn push_all(loads: &mut [Option<usize>], me: usize) -> Vec<usize> {
        core::iter::from_fn(|| push_once(loads, me)).collect()
    }

    #[test]
    fn five_one_one_one_becomes_two_each_from_the_busy_cpu() {
        let mut loads = [Some(5), Some(1), Some(1), Some(1)];
        assert_eq!(push_all(&mut loads, 0), [1, 2, 3]);
        assert_eq!(loads, [Some(2), Some(2), Some(2), Some(2)]);
    }

    #[test]
    fn a_single_cpu_balances_by_pulling() {
        let loads = [Some(5), Some(1), Some(1), Some(1)];
        assert_eq!(steal_victim(&loads, 1), Some(0));
        // One more than the others is not worth a move (it would only move the imbalance).
        let loads = [Some(2), Some(1), Some(1), Some(1)];
        assert_eq!(steal_victim(&loads, 1), None);
        assert_eq!(push_target(&loads, 0), None);
    }

    #[test]
    fn idle_cpu_steals_from_a_cpu_with_a_waiting_vcpu() {
        let loads = [Some(2), Some(0), None, Some(1)];
        assert_eq!(steal_victim(&loads, 1), Some(0));
        assert_eq!(push_target(&loads, 0), Some(1));
        // An offline CPU is neither a target nor a victim.
        let loads = [Some(3), None, Some(3)];
        assert_eq!(push_target(&loads, 0), None);
        assert_eq!(steal_victim(&[None, Some(0), Some(1)], 1), None);
        assert_eq!(steal_victim(&[None, Some(0)], 0), None);
    }

    proptest! {
        /// Pushing until nothing is worth it leaves the pushing CPU at most one above the
        /// least loaded CPU, keeps the total and never raises a CPU above the pusher.
        #[test]
        fn pushing_narrows_the_gap(raw in proptest::collection::vec(proptest::option::of(0usize..20), 1..9), me in 0usize..8) {
            let mut loads = raw.clone();
            prop_assume!(me < loads.len() && loads[me].is_some());
            let before: usize = loads.iter().flatten().sum();
            let targets = push_all(&mut loads, me);
            prop_assert_eq!(loads.iter().flatten().sum::<usize>(), before);
            let mine = loads[me].unwrap();
            for (i, l) in loads.iter().enumerate() {
                if let (Some(l), true) = (l, i != me) {
                    prop_assert!(mine < l + 2, "{:?} -> {:?}", raw, loads);
                    if targets.contains(&i) {
                        prop_assert!(*l <= mine + 1, "{:?} -> {:?}", raw, loads);
                    }
                }
            }
        }
    }
}
