import Foundation
import ShopAPI
import ShopViewModels

// `explore`'s campaign (issue 45): families of cases generated from the contract's document and the shop's
// model, each judged by the model and the contract (ExploreRun.swift). A case is data: it is listed without
// being sent, saved as a replay case, and shrunk by dropping its steps (ExploreShrink.swift).

/// A family of cases: one dimension of the campaign (docs/checks.md, "Explore").
public enum ExploreFamily: String, CaseIterable, Sendable, Codable {
    /// Every operation with its parameters at their legal extremes and defaults: each must be accepted.
    case legal
    /// Every operation that takes a token, without a valid one: each must be refused 401.
    case auth
    /// Writes at the shop's edges: the whole balance, one more, a user with nothing, the smallest and largest bundle.
    case edges
    /// Writes sent at the same time.
    case concurrent
    /// Hard text written and read back byte for byte.
    case text
    /// Ids unique, entries stable, bodies in their charset, per-user answers not shared, dates on the server's clock.
    case identity

    /// Whether its cases write (only as the environment's explore users).
    public var writes: Bool { [.edges, .concurrent, .text].contains(self) }

    /// What a finding of the family is, when the case itself does not say.
    var check: ExploreCheck {
        switch self {
        case .legal: .legalRefused
        case .auth: .ignoredAuth
        case .edges: .edgeOutcome
        case .concurrent: .concurrentWrites
        case .text: .textChanged
        case .identity: .duplicateID
        }
    }
}

/// An amount a spend takes, resolved against the balance the reads settled on when the step is sent: an
/// expectation comes from the shop's data, never from what was typed.
public enum ExploreAmount: Sendable, Equatable {
    case literal(Int)
    case wholeBalance
    case balancePlusOne
    /// Half the balance and one more: two of them exceed it, each alone does not.
    case halfPlusOne

    func resolved(balance: Int) -> Int {
        switch self {
        case let .literal(n): n
        case .wholeBalance: balance
        case .balancePlusOne: balance.addingReportingOverflow(1).overflow ? Int.max : balance + 1
        case .halfPlusOne: balance / 2 + 1
        }
    }

    var words: String {
        switch self {
        case let .literal(n): "\(n)"
        case .wholeBalance: "the whole balance"
        case .balancePlusOne: "the balance + 1"
        case .halfPlusOne: "half the balance + 1"
        }
    }
}

/// Which of the environment's bundles a purchase buys.
public enum ExploreBundle: String, Sendable, Codable, Equatable {
    case smallest, largest
}

/// One write of a case.
public enum ExploreWrite: Sendable, Equatable {
    /// A spend on the tested pack (the first of the live list, by identifier), with an optional comment.
    case spend(ExploreAmount, comment: String? = nil)
    /// A purchase of a bundle with a fresh transaction id; writes of one step with the same `slot` share one id
    /// (a transaction replayed at once). `wide`: the id lies above Int64's largest (the contract's uint64).
    case purchase(ExploreBundle, slot: Int = 0, wide: Bool = false)

    var words: String {
        switch self {
        case let .spend(amount, comment): "spend \(amount.words)" + (comment.map { " with a comment of \($0.unicodeScalars.count) characters" } ?? "")
        case let .purchase(bundle, _, wide): "buy the \(bundle.rawValue) bundle" + (wide ? " (transaction id above 2^63)" : "")
        }
    }
}

/// One step of a write sequence: one write, or several sent at the same time.
public struct ExploreStep: Sendable, Equatable {
    public var writes: [ExploreWrite]
    public init(_ writes: ExploreWrite...) { self.writes = writes }
    public init(writes: [ExploreWrite]) { self.writes = writes }
    var words: String { writes.count == 1 ? writes[0].words : "at once: " + writes.map(\.words).joined(separator: " ∥ ") }
}

/// A query parameter's value in a read case.
public enum ExploreQueryValue: Sendable, Equatable {
    case literal(String)
    /// The user the campaign reads as.
    case user
    /// The page after the last one the history says it has.
    case pastLastPage
}

/// How a request without a valid token authenticates.
public enum ExploreAuth: String, Sendable, Codable, CaseIterable {
    case none = "no token"
    case malformed = "a malformed token"
    case unknown = "an unknown token"
    case expired = "an expired token"

    var slug: String {
        switch self {
        case .none: "none"
        case .malformed: "malformed"
        case .unknown: "unknown"
        case .expired: "expired"
        }
    }
}

/// What the identity family reads and holds.
public enum ExploreIdentity: String, Sendable, Codable, CaseIterable {
    /// Every page of the history: no id on two entries.
    case uniqueIDs = "unique-ids"
    /// The first page read twice: an entry's content the same on both.
    case stableEntries = "stable-entries"
    /// Each read operation's body valid in the charset it claims.
    case charset
    /// Each per-user answer not storable by a shared cache.
    case sharedCache = "shared-cache"
    /// No entry dated after the server's own clock; the campaign's own entries dated within their writes.
    case serverClock = "server-clock"
}

/// What a case does.
public enum ExplorePlan: Sendable, Equatable {
    /// A read the contract allows: it must be answered 2xx (two answers that agree).
    case read(OperationID, query: [String: ExploreQueryValue])
    /// An operation sent without a valid token: it must be refused 401 (a write is sent once, then the
    /// balance is read).
    case auth(OperationID, ExploreAuth)
    /// Writes, step after step, each judged by the model on the reads that settle after it. `nothing`: the
    /// user's balance is first spent to 0 (a user with nothing).
    case writes([ExploreStep])
    /// A text field written and read back byte for byte.
    case roundTrip(field: String, text: String)
    case identity(ExploreIdentity)
}

/// One case of the campaign: its name, family, what it sends in words, the rule it holds the answers to
/// (the contract's words or the shop's rule), and what it does.
public struct ExploreCase: Sendable, Codable, Equatable {
    public var name: String
    public var family: ExploreFamily
    public var what: String
    public var source: String
    public var plan: ExplorePlan

    public init(name: String, family: ExploreFamily, what: String, source: String, plan: ExplorePlan) {
        self.name = name
        self.family = family
        self.what = what
        self.source = source
        self.plan = plan
    }

    /// Whether it writes: only as the environment's explore users.
    public var writes: Bool {
        switch plan {
        case .writes, .roundTrip: true
        case let .auth(operation, _): operation == .spendCheer || operation == .purchaseCheer
        case .read, .identity: false
        }
    }
}

/// The hard strings of the text family: bounded, each one a kind of text servers mangle.
public enum HardText {
    public static let all: [(name: String, text: String)] = [
        ("markup", #"<b>bold</b> & <script>alert("x")</script>"#),
        ("quotes", #"She said "hi" \ 'ok' \n \u0041 \\"#),
        ("beyond-bmp", "🎧🐋 𝄞 𠜎 cheer"),
        ("combining", "e\u{301}te\u{301} Z\u{324}\u{354}\u{367}\u{311} n\u{303}"),
        ("rtl", "שלום مرحبا \u{200F}abc"),
        ("long", String(repeating: "long comment, ", count: 72)),
        ("no-8-bit", "Ωλ Жж 漢字 ✓ €"),
        ("latin-1", "café ñ ü ß £ ½ ©"),
    ]
}

/// What the catalogue is made from: the contract's document and the shop's data the environment names.
public struct ExploreInputs: Sendable {
    public var contract: Contract
    public var bundles: [CheerBundle]
    /// The users `explore` may write as (the environment's `explore_users`); none: no write is sent.
    public var writers: [String]
    /// Purchases are checked with the App Store (an `[appstore]` table): explore's would need real sandbox
    /// transactions, and are not sent.
    public var appStoreVerifies: Bool
    /// An expired access token is known (REITERATE_EXPIRED_TOKEN).
    public var expiredToken: Bool

    public init(contract: Contract, bundles: [CheerBundle], writers: [String], appStoreVerifies: Bool, expiredToken: Bool) {
        self.contract = contract
        self.bundles = bundles
        self.writers = writers
        self.appStoreVerifies = appStoreVerifies
        self.expiredToken = expiredToken
    }
}

/// A case left out of the campaign, and why (listed with the cases: what the campaign does not cover).
public struct ExploreOmission: Sendable, Codable, Equatable {
    public var what: String
    public var why: String
}
