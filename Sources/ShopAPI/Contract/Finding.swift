import JSONTokens

/// The checks an exchange can fail: on a response, the contract's structure (`status` … `schema`), what
/// the history's pages must agree on (`paging`, `order`, `duplicate`), and the rules its words state;
/// on a request of the app under test, the `request-…` checks (docs/checks.md).
public enum ContractCheck: String, Sendable, Codable, CaseIterable {
    case status
    case contentType = "content-type"
    case schema
    case requestID = "request-id"
    case retryAfter = "retry-after"
    case paging, order, duplicate
    /// "402 when the balance is too low; nothing is spent then" (spendCheer).
    case spendRefused = "spend-refused"
    /// "A transaction is credited once: a second call with the same transaction_id answers 409" (purchaseCheer).
    case creditedOnce = "credited-once"
    /// Rules the contract implies (docs/checks.md, "Rules the contract implies"): a history entry's
    /// `amount` is a cheer, so 1 or more (spendCheer's `amount` minimum 1).
    case entryAmount = "entry-amount"
    /// A history entry is a cheer that happened: its `date` is not ahead of this machine's clock.
    case futureDate = "future-date"
    /// A balance read or credited is not below 0 ("may be 0"; a spend too big is refused).
    case balanceRange = "balance-range"
    /// refreshToken's answer: a usable access token (and refresh token), a lifetime above 0.
    case token
    /// Not the contract's: the answer differs from one the tester pinned for the same request (`P`).
    case pinned
    /// The app's request, on a path of the contract but another version of it (`/api/v1/purchase_cheer`
    /// where the contract has `/api/v2/purchase_cheer`).
    case requestVersion = "request-version"
    /// The app's request, under `/api/` on no path of the contract.
    case requestPath = "request-path"
    /// The app's request, on a path of the contract with a method its operation does not have.
    case requestMethod = "request-method"
    /// The app's request: a required parameter missing, or one its schema does not allow (`per_page` 500).
    case requestParameter = "request-parameter"
    /// The app's request: a body not labelled with a media type its operation takes.
    case requestContentType = "request-content-type"
    /// The app's request: a required body missing, a body that is not JSON, or one its schema does not allow.
    case requestBody = "request-body"
    /// The app's request got no whole answer from the server: refused, reset, cut short, too slow, or
    /// a TLS check failed (the proxy answered the app 502 or 504 itself).
    case noAnswer = "no-answer"
    /// Not an answer's alone: reads of one value after a write went back to the state from before it
    /// (a lagging read replica), while the other reads show the write (docs/checks.md, "Settled reads").
    case staleRead = "stale-read"
    /// Not an answer's alone: reads of one value, with no write seen between them, that never agreed
    /// (three reads over two seconds): what they are about is not judged.
    case readsDisagree = "reads-disagree"
}

/// Who is at fault for a finding: the one `Blame` of every judge (the watchdog, a write's check, the watch,
/// the pairing, the ledger), worded here once.
public enum Blame: String, Sendable, Codable {
    /// The app under test: it sent a request the contract does not allow, submitted twice, never posted a
    /// purchase it made, or posted it wrong.
    case app
    /// The server: it answered in a way the contract or the shop's rules do not allow.
    case server
    /// The evidence does not say (an answer lost).
    case unknown = "not known"

    /// `the app's fault`, `the server's fault`, `blame not known`.
    public var words: String {
        switch self {
        case .app: "the app's fault"
        case .server: "the server's fault"
        case .unknown: "blame not known"
        }
    }

    /// `app`, `server`, `?`: for a narrow column.
    public var short: String {
        switch self {
        case .app: "app"
        case .server: "server"
        case .unknown: "?"
        }
    }
}

/// Compares an answer with the one pinned for its request, if any (the app sets it; the REST core
/// knows no pin). Its findings join the exchange's, beside the contract's.
public protocol AnswerPins: Sendable {
    /// The findings of one answer to `request` (its `requestID` named in them).
    func check(_ request: RequestKey, status: Int, body: [UInt8], tokens: [JSONToken], requestID: String?) async -> [Finding]
    /// Reads again each pinned request whose last answer differed and is not settled (`read` sends it),
    /// so that a difference is judged on answers that agree.
    func confirm(reading read: @Sendable (RequestKey) async -> Void) async
}

/// A way a response (or an app's request) deviates from the contract (`../shared/api/reiterate-api.yaml`):
/// the data still shows; the deviation is reported with the check's name, expected against actual, and
/// who is at fault.
public struct Finding: Sendable, Equatable, Codable {
    public var check: ContractCheck
    public var expected: String
    public var actual: String
    /// Where in the answer (or request) it is, when that is narrower than the words (a field's path and
    /// the rule it broke, a header, a parameter): what makes the same finding later the same one (`FindingKey`).
    public var place: FindingPlace?
    /// The server for a deviation in an answer; the app for one in its request.
    public var blame: Blame
    /// The history entry it is about, by identity (its id; else its date, product, amount and creator), for a
    /// finding inside one entry of a page: the same finding when the entry has moved down the list.
    public var entry: String?

    public init(check: ContractCheck, expected: String, actual: String, place: FindingPlace? = nil, blame: Blame = .server) {
        self.check = check
        self.expected = expected
        self.actual = actual
        self.place = place
        self.blame = blame
    }

    /// Reads a finding saved before it carried its blame as the server's (every finding was about an answer then).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        check = try c.decode(ContractCheck.self, forKey: .check)
        expected = try c.decode(String.self, forKey: .expected)
        actual = try c.decode(String.self, forKey: .actual)
        place = try c.decodeIfPresent(FindingPlace.self, forKey: .place)
        blame = try c.decodeIfPresent(Blame.self, forKey: .blame) ?? .server
        entry = try c.decodeIfPresent(String.self, forKey: .entry)
    }

    /// `[schema] expected balance: integer, got "12"`.
    public var line: String { ShopFinding.stated(check.rawValue, expected: expected, actual: actual) }
}

/// Where in an answer a finding is.
public enum FindingPlace: Hashable, Sendable, Codable {
    /// A field (its JSON path: `history[3].amount`; "" for the body) and the schema's rule it broke.
    case field(path: String, rule: FieldRule)
    /// A header (its name as the contract writes it: `X-Request-Id`).
    case header(String)
    /// A request's parameter (its name: `per_page`) and the schema's rule it broke.
    case parameter(name: String, rule: FieldRule)
    /// What a user's history pages say of each other, whatever page or page size showed it: one fact
    /// of the server's paging, however many answers show it.
    case pages(PagingRule)
}

/// What a user's history pages must agree on across answers.
public enum PagingRule: String, Hashable, Sendable, Codable {
    /// "A page past the end is empty": entries past `total_pages`.
    case nothingPastTheLastPage
    /// One `total_count` across pages: a total that comes back after another.
    case oneTotal
}

/// The schema's rules a field can break.
public enum FieldRule: String, Hashable, Sendable, Codable {
    case type, required, minimum, maximum, minLength, maxLength, dateTime
    /// Rules the contract implies rather than states: a value given twice where it identifies one
    /// thing, a date ahead of the clock, an empty string where a usable value is due.
    case unique, notAhead, nonEmpty
    /// A string whose bytes are not UTF-8, the charset a JSON body is in (RFC 8259).
    case utf8
}

/// What makes two findings one: the same check, blamed on the same side, on the same request (method,
/// path and query: page 2's `history[3]` is not page 1's), at the same place. A header or a parameter
/// is the operation's whatever the query (no `X-Request-Id` on every page is one finding; nor is a
/// `per_page` above its maximum on every page). A finding with no narrower place than its words is the
/// same only when its words are (the expected and the actual). The Checks tab and `print`'s warnings
/// group findings by it.
public struct FindingKey: Hashable, Sendable {
    public enum Where: Hashable, Sendable {
        case place(FindingPlace)
        /// No place narrower than the words: the words themselves.
        case stated(expected: String, actual: String)
    }

    public var check: ContractCheck
    /// A request's finding is the app's, an answer's the server's: never one finding, whatever else they share.
    public var blame: Blame
    /// `GET` and `/api/v1/cheer_history?user_id=qa-alice&page=1&per_page=50`.
    public var method: String
    public var target: String
    public var at: Where

    public init(_ finding: Finding, method: String, target: String) {
        check = finding.check
        blame = finding.blame
        self.method = method
        switch finding.place {
        case .header?, .parameter?: self.target = String(target.prefix { $0 != "?" })
        case .pages?: self.target = Self.userOnly(target)
        default: self.target = target
        }
        at = finding.place.map(Where.place) ?? .stated(expected: finding.expected, actual: finding.actual)
        // A finding inside one history entry is that entry's, wherever it stands: keyed by the entry's
        // identity and the user's history, not by its position on one page (new entries push it down).
        if let entry = finding.entry, case let .field(path, rule)? = finding.place, let close = path.firstIndex(of: "]"), path.hasPrefix("history[") {
            at = .place(.field(path: "history[\(entry)" + path[close...], rule: rule))
            self.target = Self.userOnly(target)
        }
    }
}

extension FindingKey {
    /// The path and its `user_id` alone: the history of one user, whatever its page and page size.
    static func userOnly(_ target: String) -> String {
        let path = String(target.prefix { $0 != "?" })
        let user = target.split(separator: "?", maxSplits: 1).dropFirst().first?
            .split(separator: "&").first { $0.hasPrefix("user_id=") }
        return user.map { path + "?" + $0 } ?? path
    }
}

/// One finding as often as it recurred: the first and the last answer it was seen on.
public struct FindingGroup: Sendable, Equatable {
    public var key: FindingKey
    /// The finding as the last answer showed it (its words can differ from the first's: a value that changed).
    public var finding: Finding
    public var count: Int
    public var firstRequestID: String?
    public var lastRequestID: String?
    /// The first answer's `actual`, when the last one's differs.
    public var firstActual: String?
    /// The last answer's path and query (a finding about one entry is keyed by the user's history; its
    /// line names the page it was last seen on).
    public var lastTarget = ""

    /// The findings of `exchanges` (oldest first), one group per key, in the order first seen.
    public static func of(_ exchanges: [Exchange]) -> [FindingGroup] {
        var groups: [FindingGroup] = []
        var index: [FindingKey: Int] = [:]
        for e in exchanges {
            for finding in e.findings {
                let key = FindingKey(finding, method: e.method, target: e.path)
                if let i = index[key] {
                    groups[i].count += 1
                    groups[i].lastRequestID = e.requestID
                    if groups[i].firstActual == nil, finding.actual != groups[i].finding.actual { groups[i].firstActual = groups[i].finding.actual }
                    groups[i].finding = finding
                    groups[i].lastTarget = e.path
                } else {
                    index[key] = groups.count
                    groups.append(FindingGroup(key: key, finding: finding, count: 1, firstRequestID: e.requestID, lastRequestID: e.requestID, lastTarget: e.path))
                }
            }
        }
        return groups
    }
}
