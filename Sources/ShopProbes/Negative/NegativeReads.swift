import Foundation
import JSONTokens
import ShopAPI
import ShopViewModels
import TerminalText

/// The reads that say whether anything changed. A nil is a read that failed: not known, never a change.
public struct NegativeReads: Sendable {
    public struct History: Equatable, Sendable {
        public var total: Int
        /// `h-1 (5 on com.…)`, or nil when the history is empty.
        public var newest: String?
        /// The newest entry's amount (nil: no entry, or unreadable).
        public var newestAmount: Int?
        /// The newest entry's product (nil: no entry, or unreadable).
        public var newestProduct: String?

        public init(total: Int, newest: String?, newestAmount: Int?, newestProduct: String? = nil) {
            self.total = total
            self.newest = newest
            self.newestAmount = newestAmount
            self.newestProduct = newestProduct
        }
    }

    public var balance: Int?
    public var history: History?
    /// Each pack's `cheer_total` by identifier (nil: that pack could not be read); nil: the list could not.
    public var packs: [String: Int?]?
    public var second: Int?
    public var requestIDs: [String]
    /// Why the balance could not be read, when it could not.
    public var failure: ShopAPIError? = nil

    public init(balance: Int?, history: History?, packs: [String: Int?]?, second: Int?, requestIDs: [String], failure: ShopAPIError? = nil) {
        self.balance = balance
        self.history = history
        self.packs = packs
        self.second = second
        self.requestIDs = requestIDs
        self.failure = failure
    }

    /// What differs, in words (`balance 1,250 → 1,249`), what cannot be told because a read failed on
    /// either side, and what moved by another amount than the write's. Of the packs only `pack` is compared:
    /// the one the case's write names (another pack's total moves with anyone's cheer). That pack's total and
    /// the second user's balance move with other testers' activity too: a move of them is this write's only
    /// when it is the case's amount (`effect`); any other is `meanwhile`, never a change. The user's own
    /// balance and history are the user's alone: any move of them is a change.
    public func changes(to after: NegativeReads, pack: String?, effect: NegativeEffect) -> (changed: [String], unknown: [String], meanwhile: [String]) {
        let g = Wording.grouped
        var changed: [String] = [], unknown: [String] = [], meanwhile: [String] = []
        func compareMove(_ what: String, _ a: Int?, _ b: Int?, expected: Set<Int>) {
            guard let a, let b else { return unknown.append(what) }
            guard a != b else { return }
            let words = "\(what) \(g(a)) → \(g(b))"
            if expected.contains(b.minusSaturating(a)) { changed.append(words) } else { meanwhile.append(words) }
        }
        func compare<T: Equatable>(_ what: String, _ a: T?, _ b: T?, _ words: (T, T) -> String) {
            guard let a, let b else { return unknown.append(what) }
            if a != b { changed.append(words(a, b)) }
        }
        compare("balance", balance, after.balance) { "balance \(g($0)) → \(g($1))" }
        compare("history", history, after.history) {
            "history total \(g($0.total)) → \(g($1.total)), newest \($0.newest ?? "none") → \($1.newest ?? "none")"
        }
        if let pack {
            if let was = packs, let now = after.packs {
                switch (was[pack], now[pack]) {
                case (nil, nil): break
                case (.some, nil): changed.append("\(pack) gone from the pack list")
                case let (nil, .some(total)): changed.append("\(pack) appeared in the pack list (cheer_total \(total.map(g) ?? "unreadable"))")
                case let (.some(a), .some(b)): compareMove("\(pack) cheer_total", a, b, expected: effect.packRises)
                }
            } else {
                unknown.append("\(pack) cheer_total")
            }
        }
        compareMove("second user's balance", second, after.second, expected: effect.balanceMoves)
        return (changed, unknown, meanwhile)
    }

    /// The same state as `other` wherever both were read (the case's pack only): nothing changed, nothing moved.
    public func agrees(with other: NegativeReads, pack: String?) -> Bool {
        let (changed, _, meanwhile) = changes(to: other, pack: pack, effect: .none)
        return changed.isEmpty && meanwhile.isEmpty
    }

    /// Whether every change from this state to `after` is explained by earlier cases' writes that were
    /// taken (or may have been) and whose effect no read had shown yet (`pending`): the user's balance
    /// moved by their sum, and a new newest entry has one of their spends' amount and product. A change
    /// explained so is that earlier write's, never this case's (a lagging read showed it late).
    public func explained(_ after: NegativeReads, by pending: [NegativeEffect], pack: String?) -> Bool {
        guard !pending.isEmpty else { return false }
        if let a = balance, let b = after.balance, a != b {
            let delta = b.minusSaturating(a)
            let sums = pending.reduce(into: Set([0])) { sums, effect in
                sums = Set(sums.flatMap { s in effect.balanceMoves.map { s.plusSaturating($0) } }).union(sums)
            }
            guard sums.contains(delta) else { return false }
        }
        if let a = history, let b = after.history, a != b {
            guard b.total.minusSaturating(a.total) <= pending.count, b.newest != a.newest else { return false }
            guard let amount = b.newestAmount, pending.contains(where: { $0.packRises.contains(amount) && $0.product == b.newestProduct }) else { return false }
        }
        if let pack, let was = packs?[pack] ?? nil, let now = after.packs?[pack] ?? nil, was != now {
            guard pending.contains(where: { $0.product == pack && $0.packRises.contains(now.minusSaturating(was)) }) else { return false }
        }
        return balance != after.balance || history != after.history
    }

    /// Whether the write was applied on the user tested: the balance moved by the case's amount, or a new
    /// newest entry of the case's amount (a spend's). Reads that failed tell nothing: false.
    public func applied(to after: NegativeReads, effect: NegativeEffect) -> Bool {
        if let a = balance, let b = after.balance, a != b, effect.balanceMoves.contains(b.minusSaturating(a)) { return true }
        if let a = history, let b = after.history, a != b, let amount = b.newestAmount, b.newest != a.newest,
           effect.packRises.contains(amount), amount != 0 { return true }
        return false
    }
}

/// What a case's write would move if it were taken, read from the body it sends: a spend's amount (its
/// pack's total rises by it, a balance falls by it), a purchase's credit (a balance rises by it). A body
/// that does not say it plainly is read every way a lenient server could: 1.5 as 1 or 2, "1" as 1, an
/// amount missing as 1; a purchase's identifier not among the bundles by the number it ends in
/// (`….cheer.7`: 7), one missing or not text as any bundle's credit.
public struct NegativeEffect: Sendable, Equatable {
    /// How a balance moves (a spend's −amount, a purchase's +credit); 0 is no move.
    public var balanceMoves: Set<Int>
    /// How the pack's `cheer_total` rises (a spend's amount; none for a purchase).
    public var packRises: Set<Int>
    /// A spend's product as its body names it (nil: a purchase, or not text).
    public var product: String? = nil

    public init(balanceMoves: Set<Int>, packRises: Set<Int>) {
        self.balanceMoves = balanceMoves
        self.packRises = packRises
    }

    /// No move at all: what "the same state" compares with.
    public static let none = NegativeEffect(balanceMoves: [], packRises: [])

    public init(body: String, write: OperationID, bundles: [CheerBundle]) {
        let object = (try? JSONSerialization.jsonObject(with: Data(body.utf8), options: [.fragmentsAllowed])) as? [String: Any]
        if write == SpendCheer.endpoint.operation {
            let amounts: Set<Int>
            switch object?["amount"] {
            case let n as NSNumber where n.doubleValue == n.doubleValue.rounded() && abs(n.doubleValue) < 1e15: amounts = [n.intValue]
            case let n as NSNumber where abs(n.doubleValue) < 1e15: amounts = [Int(n.doubleValue.rounded(.down)), Int(n.doubleValue.rounded(.up))]
            case let text as String: amounts = Int(text).map { [$0] } ?? [1]
            case nil: amounts = [1]
            default: amounts = []
            }
            packRises = amounts
            balanceMoves = Set(amounts.map { 0.minusSaturating($0) })
            product = object?["product"] as? String
        } else {
            packRises = []
            if let id = object?["identifier"] as? String {
                if let bundle = bundles.first(where: { $0.identifier == id }) {
                    balanceMoves = [bundle.cheer]
                } else {
                    balanceMoves = Set(id.split(separator: ".").last.flatMap { Int($0) }.map { [$0] } ?? bundles.map(\.cheer))
                }
            } else {
                balanceMoves = Set(bundles.map(\.cheer))
            }
        }
    }
}

/// What an answer says about a case's write.
public enum NegativeAnswer: Equatable, Sendable {
    /// A 2xx: the write was taken (what it answered).
    case accepted(String)
    /// A 4xx that judges the write: its status.
    case refused(Int)
    /// The answer says nothing about the write (why, in words): an auth or rate limit or timeout answer,
    /// a server failure, no answer.
    case notJudged(String)

    public static func of(_ error: ShopAPIError) -> NegativeAnswer {
        let said = ErrorText.sentence(error)
        switch (error, error.status) {
        case (.signInExpired, _): return .notJudged("not signed in (401), \(said)")
        case let (.undecodable(problem, _, _), nil):
            if case .errorBody = problem.reason { return .accepted(said) }  // the status leads: "HTTP 200 with an error body …"
            return .accepted("HTTP 2xx whose body could not be read: \(said)")
        case (_, nil): return .notJudged("no answer, \(said)")
        case let (_, status?):
            switch status {
            case 200..<300: return .accepted(said)
            case 401, 407: return .notJudged("not signed in, \(said)")
            case 408: return .notJudged("the server gave up reading the request, \(said)")
            case 429: return .notJudged("rate-limited, \(said)")
            case 400..<500: return .refused(status)
            case 500..<600: return .notJudged("the server failed, \(said)")
            default: return .notJudged("neither taken nor refused, \(said)")
            }
        }
    }
}
