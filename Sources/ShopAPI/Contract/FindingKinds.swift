// The kinds of finding, one namespace for every judge (docs/checks.md names each): the contract's
// (`ContractCheck`, Finding.swift), a write's checks, the watch's rules, the ledger's verdicts, and the app's
// errors seen through the proxy. `ShopFinding` (ShopFinding.swift) is the one finding they make.

/// The kind of a finding (or of a check that passed): the contract's (and the pin's), a write's, the watch's, the
/// ledger's, or an app error seen through the proxy.
public enum CheckID: Hashable, Sendable {
    case contract(ContractCheck)
    case write(WriteCheck)
    case watch(WatchCheck)
    /// An app request seen through the proxy that ended in an error (a 4xx or 5xx, an answer cut short
    /// or in HTML, the server unreachable): kept, not a finding (the contract allows errors).
    case appError
    /// A purchase ledger line that is a finding (`ledger-credit-mismatch`, `ledger-not-credited` …).
    case ledger(Verdict)
    /// A case of `explore`'s campaign that the shop's model or the contract does not allow.
    case explore(ExploreCheck)

    /// `spend-balance`, `schema`, …: the name docs/checks.md gives it, as the Checks tab shows it.
    public var name: String {
        switch self {
        case let .contract(check): return check.rawValue
        case let .write(check): return check.rawValue
        case let .watch(check): return check.rawValue
        case .appError: return "app-error"
        case let .ledger(verdict): return "ledger-" + verdict.rawValue.replacingOccurrences(of: " ", with: "-")
        case let .explore(check): return check.rawValue
        }
    }

    /// The kind `name` names (what a test session's record keeps); nil for a name no judge gives.
    public init?(name: String) {
        if let c = ContractCheck(rawValue: name) { self = .contract(c) }
        else if let c = WriteCheck(rawValue: name) { self = .write(c) }
        else if let c = WatchCheck(rawValue: name) { self = .watch(c) }
        else if let c = ExploreCheck(rawValue: name) { self = .explore(c) }
        else if name == "app-error" { self = .appError }
        else if let v = Verdict.allCases.first(where: { CheckID.ledger($0).name == name }) { self = .ledger(v) }
        else { return nil }
    }
}

/// What `explore` flags (docs/checks.md, "Explore"): one kind a rule its campaign holds answers to.
public enum ExploreCheck: String, Sendable, Equatable, CaseIterable, Codable {
    /// A request the contract allows was refused (4xx).
    case legalRefused = "legal-refused"
    /// An operation that takes a token answered (2xx) without a valid one: a security finding.
    case ignoredAuth = "ignored-auth"
    /// A request without a valid token was refused with another status than the contract's 401.
    case authStatus = "auth-status"
    /// A write at the shop's edge (the whole balance, one more, a user with nothing, a bundle) did other than the model says.
    case edgeOutcome = "edge-outcome"
    /// A write was answered as the model says, but the balance or the history after it is not what the answers say.
    case writeEffect = "write-effect"
    /// The explore user's balance moved between cases with no write of the campaign's to explain it.
    case balanceMoved = "balance-moved"
    /// Writes sent at the same time left a state no order of them explains (below zero, credited twice, a change
    /// other than the writes applied).
    case concurrentWrites = "concurrent-writes"
    /// Text written came back different, byte for byte.
    case textChanged = "text-changed"
    /// One id on two entries of the history.
    case duplicateID = "duplicate-id"
    /// One entry read twice with different content.
    case entryUnstable = "entry-unstable"
    /// A body not valid in the charset its `Content-Type` claims.
    case charset
    /// A per-user answer a shared cache may store.
    case sharedCacheable = "shared-cacheable"
    /// An entry dated after the server's own clock (its `Date` header), or a new entry dated outside its write's time.
    case dateOutsideClock = "date-outside-clock"
    /// A legal request answered 5xx, twice.
    case serverError = "server-error"
    /// Two answers to the same request disagree (status, or a value): no verdict rests on either.
    case answersDisagree = "answers-disagree"
}

/// The checks of a write, by name (what each means: docs/checks.md).
public enum WriteCheck: String, Sendable, Equatable, CaseIterable {
    /// The balance moved by the write's amount (answered and read again), or, with no answer, to
    /// one of the two outcomes.
    case spendBalance = "spend-balance", purchaseBalance = "purchase-balance"
    /// The newest history entry is this spend, and the total grew by one.
    case spendHistory = "spend-history"
    /// The pack's cheer total grew by the amount.
    case spendPackTotal = "spend-pack-total"
    /// A refusal (4xx) left the balance as it was.
    case refusedUnchanged = "refused-unchanged"
    /// A replayed purchase (409) left the balance as it was.
    case replayUnchanged = "replay-unchanged"
    /// A write the shop must refuse (`ExpectedRefusal`: an overspend, an unknown pack, an amount
    /// below 1, an identifier that is not a bundle) was refused.
    case refusalExpected = "refusal-expected"
    /// A spend refused `402 insufficient_balance` was below the balance: the shop refuses for the
    /// balance only when it is below the amount (on the balances settled before and after it).
    case insufficientBalance = "insufficient-balance"
}

/// What the watch flags: a rule of the shop that two reads break.
public enum WatchCheck: String, Sendable, Equatable, CaseIterable {
    /// The balance fell by other than the new entries' amounts (and no bundle explains the rest).
    case debitMismatch = "debit-mismatch"
    /// The balance fell with no new entry.
    case debitWithoutEntry = "debit-without-entry"
    /// A new entry with no debit of its amount.
    case entryWithoutDebit = "entry-without-debit"
    /// The balance rose by what no sum of the environment's bundles makes.
    case creditUnexplained = "credit-unexplained"
    /// An entry seen before is gone, or changed.
    case entryVanished = "entry-vanished"
    case entryChanged = "entry-changed"
    /// The history's total fell.
    case historyShrank = "history-shrank"
    case balanceNegative = "balance-negative"
    /// A pack's total did not grow by the amounts cheered for it.
    case packTotal = "pack-total"
    // Verdicts only pairing the app's writes (seen through the proxy) with the reads can give:
    /// One app request, two history entries.
    case entryTwice = "entry-twice"
    /// A purchase of bundle N credited other than N.
    case creditMismatch = "credit-mismatch"
    /// A purchase answered 200 and not credited.
    case notCredited = "not-credited"
    /// A transaction id already credited, credited again (answered 200, not 409).
    case replayCredited = "replay-credited"
    /// The answer to the app said one balance; the next read shows another.
    case answerContradicted = "answer-contradicted"
    /// The app sent the same write twice: the second before the first's answer, or within a second of it.
    case doubleSubmission = "double-submission"
    /// After a purchase's answer was lost, the app bought again with a new transaction id (a double charge).
    case retryNewTransaction = "retry-new-transaction"
}

/// What the ledger says of one App Store transaction, or of one credit the backend gave.
public enum Verdict: String, Sendable, CaseIterable, Codable {
    /// Posted once, credited the product's cheer × quantity (or credited, the amount not seen).
    case credited
    /// Paid in the App Store; the backend never answered a post of it with a credit.
    case notCredited = "not credited"
    /// Credited another amount than the product's cheer × quantity, or under another product.
    case creditMismatch = "credit mismatch"
    case creditedTwice = "credited twice"
    /// The App Store revoked it (a refund).
    case refunded
    /// A credit with no App Store payment behind it.
    case notPaid = "not paid"
    /// A signed record that did not verify: no verdict rests on it.
    case notVerified = "not verified"
    /// A credit that could not be checked (the App Store could not be read for it, or it is another
    /// tester's purchase for another user).
    case notChecked = "not checked"
    /// Paid, and no post of it among the exchanges given, which do not cover its time: not judged.
    case notSeen = "not seen"
}
