/// Faults the stand-in can inject, each scoped to a path pattern (and optionally a method) and
/// to a rate or to the next N matching requests.
public enum FaultKind: String, CaseIterable, Sendable {
    /// Wait `ms` (+ up to `jitter` ms) before answering normally.
    case latency
    /// Answer `status` with a JSON error body.
    case status
    /// Answer an HTML error page as a proxy (nginx) sends it: 502 unless `status` says 500/503/504;
    /// `retry_after` adds a `Retry-After` header.
    case html
    /// Answer 429 with `Retry-After: retry_after`.
    case rateLimit = "rate_limit"
    /// Answer normally but cut the JSON body after `keep` bytes (default: half), Content-Length matching.
    case truncate
    /// Answer normally but with `Content-Type: content_type` (default `text/plain; charset=utf-8`).
    case contentType = "content_type"
    /// In a cheer_history page, replace one entry (`index`, default the middle one) with a malformed one.
    case malformedEntry = "malformed_entry"
    /// Put hostile text (escape sequences, C1 controls, bidi, zero-width, combining, very long words)
    /// into pack names/creators/descriptions and history creators/comments.
    case hostile
    /// Reset the TCP connection (RST) without answering.
    case reset
    /// Answer nothing until the client gives up (or `seconds` pass).
    case hang
    /// Send the head (with the full Content-Length) and the first `keep` body bytes (default: half),
    /// then nothing until the client gives up (or `seconds` pass): a server stalling mid-body.
    case stall
    /// Answer without an `X-Request-Id` header.
    case noRequestID = "no_request_id"
    /// In a cheer_history page, a `total_pages` one more than the paging adds up to.
    case badPaging = "bad_paging"
    /// In a cheer_history page, entry `index` (default 1) carries the id of the entry before it.
    case duplicateEntry = "duplicate_entry"
    /// In a cheer_history page, entries `index` and `index` + 1 (default 0 and 1) swap places.
    case outOfOrder = "out_of_order"
    // Pages that disagree with each other (issue 27: the client must neither loop nor hide):
    /// Every history page after the first says `total_count` one lower (and `total_pages` to match).
    case driftingTotal = "drifting_total"
    /// Every history page says one page fewer (`total_count` cut to a whole number of pages): the real
    /// last page lies past `total_pages` and still holds its entries.
    case hiddenPage = "hidden_page"
    /// Every history page after the first starts one entry early: its first entry is the last of the page
    /// before (an entry on two pages; the totals stay right).
    case shiftedPage = "shifted_page"
    /// A history page carries at most `cap` entries (default 50), whatever `per_page` asks: the first
    /// `cap` of the window asked, its paging fields as computed for the `per_page` asked.
    case shortPages = "short_pages"
    /// A spend debits one cheer more than asked (and answers the balance it left).
    case wrongDebit = "wrong_debit"
    /// A spend records only the first half of its comment.
    case cutComment = "cut_comment"
    // Faults that break the shop's own rules (what `reiterate-shop watch` reconciles):
    /// A spend is recorded twice in the history but debited once.
    case doubleEntry = "double_entry"
    /// A spend debits the balance but records no history entry.
    case noEntry = "no_entry"
    /// A spend records its entry but debits nothing.
    case noDebit = "no_debit"
    /// A spend leaves its pack's `cheer_total` where it was.
    case stuckTotal = "stuck_total"
    /// A balance read first credits the user 37 cheer that no purchase bought.
    case strayCredit = "stray_credit"
    /// A history read first drops the user's newest entry made by a spend.
    case vanishEntry = "vanish_entry"
    // Faults only pairing a write with the reads after it shows (issue 30):
    /// A purchase credits its bundle twice (and answers the balance it left).
    case doubleCredit = "double_credit"
    /// A purchase whose `transaction_id` was already credited is credited again (200, not 409).
    case replayCredit = "replay_credit"
    /// A purchase is answered with the balance it would have left, but credits nothing and records no
    /// transaction.
    case noCredit = "no_credit"
    /// A spend or purchase is applied, but answered with the balance from before it.
    case staleAnswer = "stale_answer"
    /// A read replica that lags: a balance or history read within `ms` (default 1000) of the user's latest
    /// write that changed their balance or history answers from the state before that write.
    case staleRead = "stale_read"
    // Lenient faults (issue 27): each takes one kind of write the shop must refuse.
    /// A spend on a product not in the pack list is taken (debited; no pack's total moves).
    case acceptUnknownProduct = "accept_unknown_product"
    /// A spend above the balance is taken (the balance goes below zero).
    case acceptOverspend = "accept_overspend"
    /// A spend of 0 or less is taken (a negative amount credits).
    case acceptNonpositiveAmount = "accept_nonpositive_amount"
    /// A write for a user the shop does not know is applied to qa-alice.
    case acceptUnknownUser = "accept_unknown_user"
    /// A purchase of any identifier ending in `.N` credits N cheer (`com.reiterate.cheer.7`: 7).
    case acceptAnyBundle = "accept_any_bundle"
    /// A `transaction_id` sent as a string ("42") is taken, as another transaction than the number 42:
    /// credited again.
    case retypedTransaction = "retyped_transaction"
    /// A negative `transaction_id` is taken (and credited).
    case acceptNegativeTransaction = "accept_negative_transaction"
    /// The one malformed body (or replay) named by `case` (a `LenientBody`) is taken, what it lacks filled
    /// with a default (`reiterate-shop negative`'s case of the same name).
    case lenientBody = "lenient_body"
    /// A write the shop takes (with any lenient fault in force) is applied, then answered `status`
    /// (default 400) as if it had been refused — or, with a 5xx, as if it had failed.
    case refuseButApply = "refuse_but_apply"
    /// Each write (spend or purchase), taken or refused, also debits another user (`user`, default
    /// qa-whale) 1 cheer.
    case secondUserWrite = "second_user_write"
    // The App Store's side (issue 38). With `--appstore-verify`, a purchase that the App Store's record
    // should refuse or credit otherwise:
    /// A purchase is credited without asking the App Store: any id, by the posted identifier's bundle, quantity 1.
    case unverifiedCredit = "unverified_credit"
    /// A purchase posted under another product than the App Store's is credited by the posted one's
    /// bundle (× quantity) instead of refused.
    case trustProduct = "trust_product"
    /// A purchase of several is credited one bundle.
    case ignoreQuantity = "ignore_quantity"
    /// A refund takes nothing back (`POST /_stub/appstore/refunds`), and a refunded transaction posted is credited.
    case keepRefunded = "keep_refunded"
    /// A transaction bought for another user (its `appAccountToken`) is credited to the one who posts it.
    case anyAccount = "any_account"
    // The App Store Server API's signed transactions (`/inApps/*`, their default path):
    /// Signed with an unrelated chain (its own root, intermediate and leaf).
    case brokenChain = "broken_chain"
    /// Signed, then one byte of the signature changed.
    case brokenSignature = "broken_signature"
    /// The payload's `bundleId` is `com.other.app`.
    case wrongBundle = "wrong_bundle"
    /// The payload's `environment` is `Production`.
    case wrongEnvironment = "wrong_environment"

    // Faults `reiterate-shop explore` finds (issue 45), one or more a dimension of its campaign:
    /// An operation answers without a valid token: a missing, malformed, unknown or expired one is taken.
    case ignoreAuth = "ignore_auth"
    /// A history read whose `per_page` is above `cap` (default 50) is refused 400, though the contract allows up to 200.
    case narrowPerPage = "narrow_per_page"
    /// A balance answer (200) without its `balance`: `{"cheer": N}`.
    case missingBalance = "missing_balance"
    /// A JSON answer's text is sent in Latin-1 (what it cannot hold as `?`) while its `Content-Type` still says UTF-8.
    case latin1Body = "latin1_body"
    /// A spend of exactly the whole balance is refused 402 (an off-by-one: the shop wants more than the amount).
    case refuseWholeBalance = "refuse_whole_balance"
    /// A spend checks the balance, waits `ms` (default 150), then debits without checking again: two spends
    /// at once may both pass the check and take the balance below zero.
    case raceOverspend = "race_overspend"
    /// A purchase checks that its transaction is new, waits `ms` (default 150), then credits without checking
    /// again: the same transaction posted twice at once is credited twice.
    case raceReplay = "race_replay"
    /// A spend's comment is stored with `<`, `>`, `&` and `"` written as HTML entities.
    case escapeMarkup = "escape_markup"
    /// A spend's comment is stored in a 3-byte UTF-8 column: each character beyond the BMP becomes `?`.
    case narrowText = "narrow_text"
    /// An answer carries `Cache-Control: public, max-age=60`: a shared cache may keep one user's answer for another.
    case publicCache = "public_cache"
    /// A spend's entry is dated an hour after the server's clock.
    case futureDate = "future_date"
    /// Every second history read shows the newest entry with one cheer more than it holds.
    case unstableEntry = "unstable_entry"

    /// Faults that decide the whole answer before the shop sees the request.
    public var isTerminal: Bool { [.status, .html, .rateLimit, .reset, .hang].contains(self) }

    /// Faults that act on the App Store Server API's signed transactions: their default path is `/inApps/*`.
    public var signsTransactions: Bool { [.brokenChain, .brokenSignature, .wrongBundle, .wrongEnvironment].contains(self) }
}

public struct FaultSpecError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

public struct FaultSpec: Sendable, Equatable, Encodable {
    public var kind: FaultKind
    /// Glob over the request path (`*` any run of characters, `?` one character); `/inApps/*` for the
    /// kinds that change signed transactions.
    public var path: String = "/api/*"
    public var method: String?
    /// Probability that a matching request is hit (0 < rate ≤ 1); `nil` = every one.
    public var rate: Double?
    /// Only the next `count` matching requests are hit, then the fault is gone; `nil` = no limit.
    public var count: Int?
    /// `latency`: the delay; `stale_read`: how long after a write the replica still answers the state before it.
    public var ms: Int = 1000
    public var jitter: Int = 0
    public var status: Int = 500
    public var retryAfter: Int?
    public var message: String?
    public var keep: Int?
    public var contentType: String = "text/plain; charset=utf-8"
    public var index: Int?
    public var seconds: Int = 120
    /// `stale_read`: the replica stays this many writes behind, whatever the time (until the next write);
    /// nil: it lags `ms`.
    public var writes: Int?
    /// `short_pages`: the most entries a history page carries.
    public var cap: Int = 50
    /// `lenient_body`: which malformed body it takes.
    public var bodyCase: LenientBody?
    /// `second_user_write`: whose balance each write also changes.
    public var user = "qa-whale"

    public init(kind: FaultKind) {
        self.kind = kind
        if kind == .html { status = 502 }
        if kind == .refuseButApply { status = 400 }
        if kind == .rateLimit { retryAfter = 2 }
        if kind.signsTransactions { path = "/inApps/*" }
        if kind == .raceOverspend || kind == .raceReplay { ms = 150 }
    }

    public static let keys = [
        "kind", "path", "method", "rate", "count", "ms", "jitter", "status", "retry_after", "message",
        "keep", "content_type", "index", "seconds", "case", "user", "cap", "writes",
    ]

    /// Parses the `--fault` syntax: comma-separated `key=value` pairs, the kind first and optionally
    /// bare: `status,status=503,path=/api/v1/balance,count=2` or `kind=latency,ms=800,jitter=400`.
    public static func parse(_ text: String) throws -> FaultSpec {
        var fields: [(String, JSON)] = []
        for (i, part) in text.split(separator: ",", omittingEmptySubsequences: true).enumerated() {
            if let eq = part.firstIndex(of: "=") {
                let key = String(part[..<eq]).lowercased()
                let raw = String(part[part.index(after: eq)...])
                let value: JSON = Int64(raw).map(JSON.int) ?? Double(raw).map(JSON.double) ?? .string(raw)
                fields.append((key, value))
            } else if i == 0 {
                fields.append(("kind", .string(String(part))))
            } else {
                throw FaultSpecError("fault '\(text)': '\(part)' is not key=value")
            }
        }
        return try from(json: .object(fields))
    }

    /// Builds a spec from the control endpoint's JSON object (the same keys as `--fault`).
    public static func from(json: JSON) throws -> FaultSpec {
        guard case let .object(pairs) = json else { throw FaultSpecError("a fault is a JSON object with a \"kind\"") }
        guard let kindName = json["kind"]?.stringValue else {
            throw FaultSpecError("a fault needs a kind; kinds: " + FaultKind.allCases.map(\.rawValue).joined(separator: ", "))
        }
        guard let kind = FaultKind(rawValue: kindName) else {
            throw FaultSpecError("unknown fault kind '\(kindName)'; kinds: " + FaultKind.allCases.map(\.rawValue).joined(separator: ", "))
        }
        var spec = FaultSpec(kind: kind)
        func int(_ key: String, _ value: JSON, _ range: ClosedRange<Int>) throws -> Int {
            guard let v = value.intValue, range.contains(v) else {
                throw FaultSpecError("fault key '\(key)' needs a whole number in \(range.lowerBound)...\(range.upperBound)")
            }
            return v
        }
        func string(_ key: String, _ value: JSON) throws -> String {
            guard let v = value.stringValue, !v.isEmpty else { throw FaultSpecError("fault key '\(key)' needs text") }
            return v
        }
        for (key, value) in pairs {
            switch key {
            case "kind": break
            case "path": spec.path = try string(key, value)
            case "method": spec.method = try string(key, value).uppercased()
            case "rate":
                guard let r = value.doubleValue, r > 0, r <= 1 else { throw FaultSpecError("fault key 'rate' needs a number in (0, 1]") }
                spec.rate = r
            case "count": spec.count = try int(key, value, 1...1_000_000)
            case "ms": spec.ms = try int(key, value, 0...600_000)
            case "jitter": spec.jitter = try int(key, value, 0...600_000)
            case "status":
                spec.status = try int(key, value, 400...599)
            case "retry_after": spec.retryAfter = try int(key, value, 0...86_400)
            case "message": spec.message = try string(key, value)
            case "keep": spec.keep = try int(key, value, 0...10_000_000)
            case "content_type": spec.contentType = try string(key, value)
            case "index": spec.index = try int(key, value, 0...Paging.maxPerPage - 1)
            case "seconds": spec.seconds = try int(key, value, 1...3600)
            case "case":
                let name = try string(key, value)
                guard let bodyCase = LenientBody(rawValue: name) else {
                    throw FaultSpecError("unknown case '\(name)'; cases: " + LenientBody.allCases.map(\.rawValue).joined(separator: ", "))
                }
                spec.bodyCase = bodyCase
            case "user": spec.user = try string(key, value)
            case "cap": spec.cap = try int(key, value, 1...Paging.maxPerPage)
            case "writes": spec.writes = try int(key, value, 1...ShopStore.pastStatesKept)
            default:
                throw FaultSpecError("unknown fault key '\(key)'; keys: " + keys.joined(separator: ", "))
            }
        }
        if kind == .html, ![500, 502, 503, 504].contains(spec.status) {
            throw FaultSpecError("an html fault answers 500, 502, 503 or 504")
        }
        if kind == .refuseButApply, !(400...599).contains(spec.status) {
            throw FaultSpecError("a refuse_but_apply fault answers a 4xx or 5xx status")
        }
        if kind == .lenientBody, spec.bodyCase == nil {
            throw FaultSpecError("a lenient_body fault needs case=…; cases: " + LenientBody.allCases.map(\.rawValue).joined(separator: ", "))
        }
        return spec
    }

    /// The keys that describe this fault (those of its kind, defaults included): what `/_stub/faults` lists.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: FaultKey.self)
        try c.encode(kind.rawValue, forKey: "kind")
        try c.encode(path, forKey: "path")
        try c.encodeIfPresent(method, forKey: "method")
        try c.encodeIfPresent(rate, forKey: "rate")
        try c.encodeIfPresent(count, forKey: "count")
        switch kind {
        case .latency:
            try c.encode(ms, forKey: "ms")
            try c.encode(jitter, forKey: "jitter")
        case .staleRead:
            try c.encode(ms, forKey: "ms")
            try c.encodeIfPresent(writes, forKey: "writes")
        case .shortPages, .narrowPerPage: try c.encode(cap, forKey: "cap")
        case .raceOverspend, .raceReplay: try c.encode(ms, forKey: "ms")
        case .ignoreAuth, .missingBalance, .latin1Body, .refuseWholeBalance, .escapeMarkup, .narrowText, .publicCache, .futureDate, .unstableEntry: break
        case .status:
            try c.encode(status, forKey: "status")
            try c.encodeIfPresent(retryAfter, forKey: "retry_after")
            try c.encodeIfPresent(message, forKey: "message")
        case .html:
            try c.encode(status, forKey: "status")
            try c.encodeIfPresent(retryAfter, forKey: "retry_after")
        case .rateLimit: try c.encode(retryAfter ?? 2, forKey: "retry_after")
        case .truncate: try c.encodeIfPresent(keep, forKey: "keep")
        case .stall:
            try c.encodeIfPresent(keep, forKey: "keep")
            try c.encode(seconds, forKey: "seconds")
        case .contentType: try c.encode(contentType, forKey: "content_type")
        case .malformedEntry, .duplicateEntry, .outOfOrder: try c.encodeIfPresent(index, forKey: "index")
        case .hang: try c.encode(seconds, forKey: "seconds")
        case .hostile, .reset, .noRequestID, .badPaging, .driftingTotal, .hiddenPage, .shiftedPage, .wrongDebit, .cutComment, .doubleEntry, .noEntry, .noDebit, .stuckTotal, .strayCredit,
             .vanishEntry, .doubleCredit, .replayCredit, .noCredit, .staleAnswer: break
        case .acceptUnknownProduct, .acceptOverspend, .acceptNonpositiveAmount, .acceptUnknownUser, .acceptAnyBundle, .retypedTransaction,
             .acceptNegativeTransaction: break
        case .unverifiedCredit, .trustProduct, .ignoreQuantity, .keepRefunded, .anyAccount, .brokenChain, .brokenSignature, .wrongBundle,
             .wrongEnvironment: break
        case .lenientBody: try c.encodeIfPresent(bodyCase?.rawValue, forKey: "case")
        case .refuseButApply:
            try c.encode(status, forKey: "status")
            try c.encodeIfPresent(message, forKey: "message")
        case .secondUserWrite: try c.encode(user, forKey: "user")
        }
    }
}

/// The malformed bodies a `lenient_body` fault can take (named as `reiterate-shop negative`'s cases),
/// and the default each is applied with.
public enum LenientBody: String, CaseIterable, Sendable {
    /// spendCheer `amount` 1.5: taken as its whole part (1).
    case amountFraction = "amount-fraction"
    /// spendCheer `amount` "1": taken as the number the text holds.
    case amountAsText = "amount-as-text"
    /// spendCheer without `amount`: a spend of 1.
    case amountMissing = "amount-missing"
    /// spendCheer without `product`: debited, on no pack.
    case productMissing = "product-missing"
    /// spendCheer `product` 42: taken as the product "42" (debited; no pack's total moves).
    case productNotText = "product-not-text"
    /// spendCheer `comment` 42: recorded as the comment "42".
    case commentNotText = "comment-not-text"
    /// A spend body that is JSON but not an object (`[]`): a spend of 1, on no pack.
    case bodyNotObject = "body-not-object"
    /// purchaseCheer with a `transaction_id` already credited: credited again.
    case transactionReplayed = "transaction-replayed"
    /// purchaseCheer `transaction_id` 1.5: credited, as the transaction "1.5".
    case transactionFraction = "transaction-fraction"
    /// purchaseCheer without `transaction_id`: credited, each time as a new transaction.
    case transactionMissing = "transaction-missing"
    /// purchaseCheer without `identifier`: credited as com.reiterate.cheer.50.
    case identifierMissing = "identifier-missing"
    /// purchaseCheer `identifier` 42: credited as com.reiterate.cheer.50.
    case identifierNotText = "identifier-not-text"
    /// A purchase body that is JSON but not an object (`[]`): credited as com.reiterate.cheer.50, a new transaction.
    case purchaseBodyNotObject = "purchase-body-not-object"
}

/// A key of a fault's JSON (`FaultSpec.keys` and, listed, `id`, `remaining`, `hits`).
struct FaultKey: CodingKey, ExpressibleByStringLiteral {
    let stringValue: String
    init(stringValue: String) { self.stringValue = stringValue }
    init(stringLiteral value: String) { stringValue = value }
    var intValue: Int? { nil }
    init?(intValue: Int) { return nil }
}
