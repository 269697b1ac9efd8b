import ShopAPI

// A failing write sequence reduced to the shortest one that still fails (Hypothesis's shrinking, on the live
// shop): each step dropped in turn, then each write of a step sent at once; a smaller sequence is kept when it
// fails with the same kind of finding. Every try is sent, so the tries are bounded, and the budget holds them.

extension ExploreRun {
    /// At most this many smaller sequences are sent for one failure.
    static let shrinkTries = 8

    /// The sequences one write shorter than `steps`: a step left out, or one write of a step sent at once.
    static func simpler(_ steps: [ExploreStep]) -> [[ExploreStep]] {
        var out: [[ExploreStep]] = []
        if steps.count > 1 {
            for i in steps.indices {
                var s = steps
                s.remove(at: i)
                out.append(s)
            }
        }
        for (i, step) in steps.enumerated() where step.writes.count > 1 {
            for j in step.writes.indices {
                var writes = step.writes
                writes.remove(at: j)
                var s = steps
                s[i] = ExploreStep(writes: writes)
                out.append(s)
            }
        }
        var unique: [[ExploreStep]] = []
        for s in out where !unique.contains(s) { unique.append(s) }
        return unique
    }

    /// The shortest sequence found that still fails with a finding of `kind` (`steps` itself when none does). A smaller
    /// sequence counts only when it started like the original: from no balance when it did, else from one above 0
    /// (what the failure left behind, a balance below 0, starts nothing a fresh user would).
    func shrunk(_ c: ExploreCase, steps: [ExploreStep], kind: CheckID?, start: Int?, facts: Facts) async -> [ExploreStep] {
        func like(_ other: Int?) -> Bool {
            guard let start, let other else { return false }
            return start == 0 ? other == 0 : other > 0
        }
        var current = steps
        var tries = 0
        search: while tries < Self.shrinkTries {
            for candidate in Self.simpler(current) {
                guard tries < Self.shrinkTries, !Task.isCancelled else { break search }
                tries += 1
                var smaller = c
                smaller.plan = .writes(candidate)
                await last.startCase()
                let outcome = await judged(smaller, facts: facts)
                let started = await last.caseStart
                if outcome.note == Self.budgetWords { break search }
                if outcome.verdict == .finding, outcome.findings.contains(where: { $0.kind == kind }), like(started) {
                    current = candidate
                    continue search
                }
            }
            break
        }
        return current
    }
}
