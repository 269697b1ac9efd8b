import Foundation
import ShopAPI
import ShopModel

/// How a write ended, judged once: whether it was applied, each check with expected against actual,
/// and the sentence that says so. `WriteOutcome.judge` is a pure function of the write, its answer,
/// what was known before and the reads after; the notice, the dialog, the Checks tab, the bug report
/// and the exit status of `spend`/`buy` all read this one value.
public struct WriteOutcome: Equatable, Sendable {
    public enum Applied: Equatable, Sendable { case yes, no, unknown }

    public var applied: Applied
    /// How the server answered the write itself: took it, refused it, or no answer came (lost,
    /// cut, timed out). What happened after a lost answer is `applied`, from the reads after.
    public enum Answer: Equatable, Sendable { case accepted, refused, unanswered }
    public var answer: Answer
    /// This write's checks, in the order they were made.
    public var checks: [CheckRecord]
    /// The write's failed answer, in its parts, when the outcome's words begin with it.
    public var failure: FailureWords?
    /// What happened, in words (after the failure, before the checks' verdict).
    public var headline: String
    /// The request id of the write's failed answer, if it failed with a response head.
    /// The write's own answer when it was an error (a refusal, or no usable answer): what `spend` and
    /// `buy` set their exit status by.
    public var error: ShopAPIError?
    public var requestID: String?
    /// The lost purchase this write settled (credited after all: never offer its id again).
    var settlesLostPurchase = false
    /// What the reads after the write showed of their own: a stale read, reads that never agreed
    /// (`stale-read`, `reads-disagree`). Findings about the server's reads, not checks of the write.
    public var readFindings: [CheckRecord] = []
    /// What the reads after the write settled on: the balance, and the first history page that showed the
    /// settled history (what this machine knows now; `spend`/`buy` leave them in the cache last).
    public var settledBalance: Int?
    public var settledFirstPage: CheerHistoryPage?

    public var failed: [CheckRecord] { checks.filter { $0.outcome == .failed } }
    /// The checks the reads could not make, and why (`spend-history: not judged: …`): a ✔ says what it
    /// covered, so these follow it.
    public var notJudged: [String] = []

    /// The server took a write the shop must refuse (an overspend, an unknown pack, not a bundle…):
    /// the finding that leads the verdict and sets `spend`/`buy`'s exit status.
    public var acceptedRefusable: CheckRecord? { failed.first { $0.check == .write(.refusalExpected) } }

    /// Good news only when the write went through and every check agrees.
    public var succeeded: Bool { applied == .yes && failed.isEmpty }

    /// A refusal the answer and the reads after it agree on (nothing changed, no check failed): what kind.
    public enum Refusal: Equatable, Sendable {
        /// The shop must refuse this write (overspend, not a bundle…), and it did.
        case expected
        /// Already done (a purchase's transaction credited before: 409), nothing changed.
        case alreadyDone
        /// Refused by the server's own rule (a 4xx), nothing changed.
        case refused
    }
    var refusalKind: Refusal?

    /// Set when the write was refused and every check of it passed; nil otherwise (a failure is a failure).
    public var refusal: Refusal? { applied == .no && answer == .refused && failed.isEmpty ? refusalKind : nil }

    /// The failure, the headline and the checks' verdict: `… ✔ 3 checks passed` or `… ✗ spend-balance: expected …`.
    public var text: String { (failure?.line ?? "") + words }

    /// The headline and the checks' verdict (what follows the failure).
    var words: String {
        let failed = failed
        let summary = failed.first.map { " " + $0.line + (failed.count > 1 ? " (and \(failed.count - 1) more)" : "") }
            ?? (checks.isEmpty ? "" : " ✔ \(checks.count) check\(checks.count == 1 ? "" : "s") passed")
        let open = notJudged.isEmpty ? "" : " (\(notJudged.joined(separator: "; ")))"
        return headline + summary + open
    }

    /// The outcome as a notice: the failure in its parts, then the words and the checks' verdict.
    public var notice: Notice {
        let kind: Notice.Kind = succeeded ? .info : .error
        guard let failure else { return Notice(kind, words, requestID: requestID) }
        return Notice(kind, "", failure: failure, verdict: words, requestID: requestID)
    }

    /// Begins with what the write's answer said (`ShopUpdate.explain`).
    mutating func said(_ notice: Notice) {
        failure = notice.failure
        headline = notice.headline + (notice.verdict ?? "")
    }
}

/// What differs between kinds of write, as data: how the balance moves when one is applied, the
/// names of its checks, and its words. The judging below is the same for every kind.
struct WriteRules {
    /// The balance change when applied (nil when it cannot be told: an identifier that is not a bundle).
    var delta: Int?
    /// `− 7` or `+ 200`, as the expectations show the change.
    var deltaText: String
    var balanceCheck: WriteCheck
    /// The status that says "already done, nothing changed" (409 for a replayed purchase) and its check.
    var replay: (status: Int, check: WriteCheck)?
    /// Whether an unanswered write is settled by "the fresh balance is one of the two outcomes" check.
    var checksEitherOutcome: Bool
    var success: (_ balance: Int) -> String
    var wasApplied: (_ fresh: Int, _ before: Int) -> String
    var wasNotApplied: (_ fresh: Int) -> String
    var neither: (_ fresh: Int, _ expected: Int?, _ before: Int) -> String
    var unknown: String
    /// Said after a refusal when the balance read again is unchanged (nil: nothing to add).
    var refusedUnchanged: ((_ fresh: Int) -> String)?

    /// `name`: a spend's pack as the shop lists it (else its identifier); `credit`: a purchase's cheer,
    /// from the environment's bundles (nil: not a bundle).
    static func of(_ kind: ShopWrite, name: String? = nil, credit: Int? = nil) -> WriteRules {
        let g = Wording.grouped
        switch kind {
        case let .spend(spend):
            let amount = spend.amount, name = name ?? spend.product
            return WriteRules(
                delta: -amount, deltaText: "− \(g(amount))", balanceCheck: .spendBalance, replay: nil, checksEitherOutcome: true,
                success: { "Spent \(g(amount)) cheer on \(name). Balance \(g($0)) cheer." },
                wasApplied: { fresh, before in "the spend was applied (balance \(g(fresh)) = \(g(before)) − \(g(amount)))." },
                wasNotApplied: { "the spend was not applied (balance \(g($0)), unchanged)." },
                neither: { fresh, expected, before in
                    "the balance is now \(g(fresh)): neither \(expected.map(g) ?? "?") (applied) nor \(g(before)) (not applied)."
                },
                unknown: "whether the spend was applied is not known: the balance could not be read again.",
                refusedUnchanged: { " Nothing was spent (balance \(g($0)), unchanged)." })
        case let .purchase(purchase):
            let (identifier, transactionID, bundle) = (purchase.identifier, purchase.transactionID, credit)
            return WriteRules(
                delta: bundle, deltaText: "+ \(bundle.map(g) ?? "?")", balanceCheck: .purchaseBalance, replay: (409, .replayUnchanged),
                checksEitherOutcome: false,
                success: { "Bought \(identifier). Balance \(g($0)) cheer." },
                wasApplied: { fresh, before in
                    "the purchase was credited (balance \(g(fresh)) = \(g(before)) + \(g(bundle ?? 0))); transaction \(transactionID) will not be credited again."
                },
                wasNotApplied: { "the purchase was not credited (balance \(g($0)), unchanged); buy again to retry transaction \(transactionID)." },
                neither: { fresh, _, _ in "the balance is now \(g(fresh)): it does not say whether transaction \(transactionID) was credited." },
                unknown: "whether the purchase was credited is not known: the balance could not be read again.",
                refusedUnchanged: nil)
        }
    }
}

extension WriteOutcome {
    /// The outcome of the write `v` verified; `requestID` names the request its checks are about.
    static func judge(_ v: Verification, requestID: String?) -> WriteOutcome {
        let rules = WriteRules.of(v.kind, name: v.before.packName, credit: v.before.credit)
        let g = Wording.grouped
        var checks: [CheckRecord] = []
        func check(_ name: WriteCheck, _ passed: Bool, expected: String, actual: String) {
            checks.append(CheckRecord(check: .write(name), outcome: passed ? .passed : .failed, expected: expected, actual: actual,
                                      request: v.request, requestID: requestID, at: v.at))
        }
        let fresh = v.balance.value
        let before = v.before.balance
        let expected = before.flatMap { b in rules.delta.map { b.plusSaturating($0) } }
        var outcome = WriteOutcome(applied: .unknown, answer: .unanswered, checks: [], headline: "", requestID: v.answer.failureRequestID)
        if case let .failure(error) = v.answer { outcome.error = error }
        // A write the shop must refuse: taken, it is the finding that leads, and every value it
        // changed is checked against "unchanged" (never a ✔ on what it should not have done).
        // Each refusal the shop owed, as far as what came after still proves it: the balance read before
        // may be old (the phone bought cheer meanwhile), so an overspend counts only when the balance
        // after the write is below zero; a pack may have come into the list meanwhile, so an unknown
        // pack counts only when the list read after the write still lacks it.
        let after: Int? = { if case let .success(answered) = v.answer { return answered } else { return fresh } }()
        let refusals = v.before.refusals.filter { refusal in
            switch refusal {
            case .overspend: return after.map { $0 < 0 } ?? false
            case .unknownPack: if case .read(.some) = v.packs { return false } else { return true }
            case .notABundle, .notPositive, .transactionNotWhole, .revokedInAppStore, .otherProductInAppStore: return true
            }
        }
        let mustRefuse = !refusals.isEmpty
        let reasons = refusals.map(\.reason).joined(separator: "; ")
        let noun: String
        switch v.kind {
        case .spend: noun = "spend"
        case .purchase: noun = "purchase"
        }
        func flagAccepted(_ actual: String) {
            check(.refusalExpected, false, expected: "a refusal (4xx): \(reasons)", actual: actual)
        }
        func unchanged(_ value: Int) -> String { "\(g(value)) (unchanged: the \(noun) must be refused)" }

        switch v.answer {
        case let .success(answered):
            outcome.applied = .yes
            outcome.answer = .accepted
            if mustRefuse {
                flagAccepted("accepted (HTTP 2xx, balance \(g(answered)))")
                outcome.headline = "The server accepted a \(noun) it must refuse: \(reasons). Balance \(g(fresh ?? answered)) cheer."
                if let before, let fresh {
                    check(rules.balanceCheck, answered == before && fresh == before, expected: unchanged(before),
                          actual: answered == fresh ? g(fresh) : "answered \(g(answered)), read \(g(fresh))")
                }
            } else {
                outcome.headline = rules.success(fresh ?? answered)
            }
            if !mustRefuse, let expected, let before, let fresh {
                check(rules.balanceCheck, answered == expected && fresh == expected, expected: "\(g(expected)) (\(g(before)) \(rules.deltaText))",
                      actual: answered == fresh ? g(fresh) : "answered \(g(answered)), read \(g(fresh))")
            } else if !mustRefuse, let expected, let before, case let .unread(why) = v.balance, why.contains("stale-read") {
                // The reads lag behind the write: an answer that is wrong is a failed check on its own; one that
                // is right is not a ✔ (one answer, no read agrees with it): not judged, and said.
                if answered != expected {
                    check(rules.balanceCheck, false, expected: "\(g(expected)) (\(g(before)) \(rules.deltaText))", actual: "answered \(g(answered))")
                } else {
                    outcome.notJudged.append("\(rules.balanceCheck.rawValue) not judged: answered \(g(answered)) as expected, but \(why.dropFirst("not judged: ".count))")
                }
            }
        case let .failure(error):
            outcome.answer = error.category.mayHaveBeenApplied ? .unanswered : .refused
            if let replay = rules.replay, error.status == replay.status {
                outcome.applied = .no
                outcome.said(ShopUpdate.explain(error, kind: v.kind))
                if let before, let fresh {
                    check(replay.check, fresh == before, expected: "\(g(before)) (unchanged)", actual: g(fresh))
                    // A refusal named as one only once the reads after it showed nothing changed.
                    outcome.refusalKind = mustRefuse ? .expected : .alreadyDone
                }
            } else if error.category.mayHaveBeenApplied, let before, let fresh {
                // No answer to check: the balance read again tells which of the two outcomes happened.
                if mustRefuse {
                    check(rules.balanceCheck, fresh == before, expected: unchanged(before), actual: g(fresh))
                    if fresh != before { flagAccepted("applied: the balance went from \(g(before)) to \(g(fresh)) with no answer") }
                } else if rules.checksEitherOutcome, let expected {
                    check(rules.balanceCheck, fresh == expected || fresh == before,
                          expected: "\(g(expected)) (applied: \(g(before)) \(rules.deltaText)) or \(g(before)) (not applied)", actual: g(fresh))
                }
                outcome.failure = ErrorText.words(error)
                let line = " — "
                if let expected, fresh == expected {
                    outcome.applied = .yes
                    // An answer of the server's own (a 5xx with its head) that failed a write it applied.
                    let failedButApplied = (500..<600).contains(error.status ?? 0) ? "the server failed the \(noun) but applied it: " : ""
                    outcome.headline = line + failedButApplied + rules.wasApplied(fresh, before)
                    outcome.settlesLostPurchase = true
                } else if fresh == before {
                    outcome.applied = .no
                    outcome.headline = line + rules.wasNotApplied(fresh)
                } else {
                    outcome.headline = line + rules.neither(fresh, expected, before)
                }
            } else if error.category.mayHaveBeenApplied {
                outcome.failure = ErrorText.words(error)
                if case let .unread(why) = v.balance, why.hasPrefix("not judged") {
                    let check = why.contains("stale-read") ? "" : " (reads-disagree)"
                    outcome.headline = " — whether the \(noun) was applied is \(why)\(check)."
                } else {
                    outcome.headline = " — " + rules.unknown
                }
            } else {
                outcome.applied = .no
                outcome.said(ShopUpdate.explain(error, kind: v.kind))
                if let before, let fresh, (400..<500).contains(error.status ?? 0) {
                    check(.refusedUnchanged, fresh == before, expected: "\(g(before)) (unchanged)", actual: g(fresh))
                    outcome.refusalKind = mustRefuse ? .expected : .refused
                    // Said once, and only as read: the balance after the refusal.
                    if fresh == before, let words = rules.refusedUnchanged { outcome.headline += words(fresh) }
                }
                // The shop's rule (the contract's 402): not enough cheer only when the balance is below the
                // amount, on the balances settled before and after (a balance that fell meanwhile judges nothing).
                if error.status == 402, case let .spend(spend) = v.kind, !v.lagSeen,
                   let founded = ShopRules.refusalForBalanceIsFounded(amount: spend.amount, before: before, after: fresh), let before {
                    let amount = g(spend.amount)
                    check(.insufficientBalance, founded,
                          expected: founded ? "402: the balance (\(g(before))) is below \(amount)"
                                            : "the spend taken: the balance (\(g(before))) covers \(amount), and 402 is only for a balance below the amount",
                          actual: "refused HTTP 402 with the balance at \(g(before)) before and \(fresh.map(g) ?? "?") after")
                }
            }
        }
        if outcome.applied == .yes, case let .spend(spend) = v.kind {
            if case let .unread(why) = v.history, why.contains("stale-read") { outcome.notJudged.append("\(WriteCheck.spendHistory.rawValue) \(why)") }
            let (product, amount, comment) = (spend.product, spend.amount, spend.comment)
            // What a spend changes besides the balance: the history's newest entry and the pack's total.
            if let facts = v.history.value {
                let entry = facts.newest
                let isThis = entry.map(spend.explains) == true
                let describe = entry.map { "\(g($0.amount)) on \($0.product)\(($0.comments ?? []).last?.body.map { " “\($0)”" } ?? "")" } ?? "no entry"
                let wanted = "\(g(amount)) on \(product)\(comment.map { " “\($0)”" } ?? "")"
                if mustRefuse {
                    if let total = v.before.historyTotal {
                        check(.spendHistory, facts.total == total,
                              expected: "no new entry, total \(g(total)) (unchanged: the spend must be refused)",
                              actual: "newest \(describe), total \(g(facts.total))")
                    }
                } else if let total = v.before.historyTotal {
                    check(.spendHistory, isThis && facts.total == total.plusSaturating(1),
                          expected: "newest \(wanted), total \(g(total.plusSaturating(1)))", actual: "newest \(describe), total \(g(facts.total))")
                } else {
                    check(.spendHistory, isThis, expected: "newest \(wanted)", actual: "newest \(describe)")
                }
            }
            if let beforeCheer = v.before.packCheer, case let .read(after?) = v.packs, mustRefuse {
                check(.spendPackTotal, after == beforeCheer, expected: unchanged(beforeCheer), actual: g(after))
            } else if let beforeCheer = v.before.packCheer, case let .read(after?) = v.packs {
                check(.spendPackTotal, after == beforeCheer.plusSaturating(amount),
                      expected: "\(g(beforeCheer.plusSaturating(amount))) (\(g(beforeCheer)) + \(g(amount)))", actual: g(after))
            }
        }
        outcome.checks = checks
        return outcome
    }
}
