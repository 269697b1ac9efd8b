/// Settings for the stand-in's data and auth.
public struct ShopConfig: Sendable {
    public var seed: UInt64
    public var whaleHistory: Int
    public var accessToken: String
    public var refreshToken: String
    /// Access tokens expire this many seconds after they are issued (the `--token` one after start);
    /// `nil` means they never expire.
    public var tokenTTL: Double?
    /// `purchase_cheer` verifies each transaction with the App Store side before it credits (as the
    /// contract says); off, it credits any id it has not credited before.
    public var appStoreVerify: Bool

    public init(
        seed: UInt64 = SeedData.defaultSeed, whaleHistory: Int = SeedData.defaultWhaleHistory,
        accessToken: String = "dev-token", refreshToken: String = "dev-refresh", tokenTTL: Double? = nil, appStoreVerify: Bool = false
    ) {
        self.seed = seed
        self.whaleHistory = whaleHistory
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.tokenTTL = tokenTTL
        self.appStoreVerify = appStoreVerify
    }
}

/// What `auth/refresh` answers.
public struct TokenGrant: Sendable, Equatable, Encodable {
    public var accessToken: String
    public var refreshToken: String
    /// Absent (not null) when tokens never expire.
    public var expiresIn: Int?

    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token", refreshToken = "refresh_token", expiresIn = "expires_in"
    }
}

/// The shop's whole mutable state. An actor: every write is one isolated step, so concurrent spends
/// and purchases never lose an update.
public actor ShopStore {
    struct UserState {
        var balance: Int
        var base: HistorySource
        /// Entries added by `spend`, newest first, shown before `base`.
        var added: [CheerHistoryEntry] = []
    }

    /// A user's balance and entries as they were until a write changed either, and when that write was
    /// applied: what a lagging read replica may still answer (the `stale_read` fault).
    struct LastWrite {
        var balance: Int
        var added: [CheerHistoryEntry]
        var at: Double
    }

    /// Cheer bundles on sale in the App Store: `com.reiterate.cheer.N` credits N.
    public static let bundleAmounts = [50, 100, 200, 500, 1000, 2500, 5000]
    static let bundlePrefix = "com.reiterate.cheer."

    /// The cheer a bundle's identifier credits; nil for anything else.
    public static func bundleAmount(of identifier: String) -> Int? {
        bundleAmounts.first { identifier == "\(bundlePrefix)\($0)" }
    }

    /// What the shop credited for one transaction: to whom, how much in all, and how much a refund took back.
    public struct Credit: Sendable, Equatable {
        public var user: String
        public var amount: Int
        public var takenBack = 0
    }

    public let config: ShopConfig
    private let basePacks: [AudioPack]
    private let aliceHistory: [CheerHistoryEntry]
    private var packs: [AudioPack] = []
    private var users: [String: UserState] = [:]
    /// Per user, the states their latest writes replaced, oldest first (at most `pastStatesKept`): what a
    /// lagging replica answers.
    private var lastWrites: [String: [LastWrite]] = [:]
    static let pastStatesKept = 64
    /// Transactions credited, by key (the id's digits; `text:` and the string for one sent as text).
    private var credits: [String: Credit] = [:]
    /// History reads answered under `unstable_entry`.
    private var historyReads = 0
    /// The App Store's purchases (`ShopStore+AppStore.swift`): in this actor, so that a refund and what
    /// the shop takes back for it, or a verification and the credit after it, are one step.
    var appStore = AppStoreLedger()
    /// Valid access tokens and when each expires (`nil`: never).
    private var accessTokens: [String: Double?] = [:]
    private var currentRefreshToken = ""
    private var spendCounter = 0

    public init(config: ShopConfig, now: Double) {
        self.config = config
        basePacks = Catalog.packs(seed: config.seed)
        aliceHistory = SeedData.aliceHistory(seed: config.seed, packs: basePacks)
        packs = basePacks
        users = Self.seededUsers(config: config, aliceHistory: aliceHistory)
        accessTokens = [config.accessToken: config.tokenTTL.map { now + $0 }]
        currentRefreshToken = config.refreshToken
    }

    private static func seededUsers(config: ShopConfig, aliceHistory: [CheerHistoryEntry]) -> [String: UserState] {
        [
            SeedData.alice: UserState(balance: SeedData.aliceBalance, base: .stored(aliceHistory)),
            SeedData.empty: UserState(balance: 0, base: .stored([])),
            SeedData.whale: UserState(
                balance: SeedData.whaleBalance,
                base: .generated(count: config.whaleHistory, seed: config.seed, user: SeedData.whale)
            ),
        ]
    }

    /// Back to the seeded state: balances, histories, transactions, tokens, the App Store's purchases.
    public func reset(now: Double) {
        packs = basePacks
        users = Self.seededUsers(config: config, aliceHistory: aliceHistory)
        lastWrites = [:]
        credits = [:]
        appStore = AppStoreLedger()
        accessTokens = [config.accessToken: config.tokenTTL.map { now + $0 }]
        currentRefreshToken = config.refreshToken
        spendCounter = 0
    }

    // MARK: Auth

    /// Checks an `Authorization` header value; throws a 401 `ShopError` unless it holds a valid bearer token.
    public func authorize(header: String?, now: Double) throws {
        guard let header, header.count > 7, header.prefix(7).lowercased() == "bearer " else {
            throw ShopError.unauthorized("missing bearer token: send 'Authorization: Bearer <access token>'")
        }
        let token = header.dropFirst(7).trimmingCharacters(in: " ")
        guard let expiry = accessTokens[token] else {
            throw ShopError.unauthorized("unknown access token")
        }
        if let expiry, now >= expiry {
            throw ShopError.unauthorized("access token expired", code: "token_expired")
        }
    }

    /// Trades the current refresh token for a new access token and a new refresh token (rotation:
    /// the old refresh token stops working; access tokens already issued stay valid until they expire).
    public func refresh(refreshToken: String, now: Double) throws -> TokenGrant {
        guard !currentRefreshToken.isEmpty, refreshToken == currentRefreshToken else {
            throw ShopError.unauthorized("invalid or already used refresh token", code: "invalid_refresh_token")
        }
        let grant = TokenGrant(
            accessToken: "at-" + Self.randomHex(24),
            refreshToken: "rt-" + Self.randomHex(24),
            expiresIn: config.tokenTTL.flatMap { Int(exactly: $0.rounded(.up)) }
        )
        accessTokens.updateValue(config.tokenTTL.map { now + $0 }, forKey: grant.accessToken)
        currentRefreshToken = grant.refreshToken
        return grant
    }

    /// Makes every access token issued so far invalid (a control endpoint, to exercise refresh).
    public func revokeAccessTokens() {
        accessTokens = [:]
    }

    static func randomHex(_ count: Int) -> String {
        var rng = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef")
        return String((0..<count).map { _ in digits[Int(rng.next() % 16)] })
    }

    // MARK: Reads

    public func audioPacks() -> [AudioPack] { packs }

    /// A catalogue change made on purpose (`PUT /_stub/packs/ID`): the fields given, on the pack with
    /// this identifier, or a new pack at the end (it needs a name). False: a new pack with no name.
    public func editPack(identifier: String, name: String?, priceCents: Int?, cheerTotal: Int?, creator: String?) -> Bool {
        var pack: AudioPack
        if let i = packs.firstIndex(where: { $0.identifier == identifier }) {
            pack = packs[i]
        } else {
            guard let name, let base = packs.first ?? basePacks.first else { return false }
            pack = base
            pack.identifier = identifier
            pack.name = name
            pack.cheerTotal = 0
            pack.tags = []
        }
        if let name { pack.name = name }
        if let priceCents { pack.priceCents = priceCents }
        if let cheerTotal { pack.cheerTotal = cheerTotal }
        if let creator { pack.creator = creator }
        if let i = packs.firstIndex(where: { $0.identifier == identifier }) { packs[i] = pack } else { packs.append(pack) }
        return true
    }

    /// `DELETE /_stub/packs/ID`; false when there was no such pack.
    public func removePack(identifier: String) -> Bool {
        guard let i = packs.firstIndex(where: { $0.identifier == identifier }) else { return false }
        packs.remove(at: i)
        return true
    }

    public func balance(user: String) throws -> Int {
        guard let state = users[user] else { throw ShopError.unknownUser(user) }
        return state.balance
    }

    /// One page of `user`'s history. `shift` entries earlier than the paging says (the `shifted_page`
    /// fault: a page that starts with the last entry of the page before), never before the newest.
    public func history(user: String, page: Int, perPage: Int, shift: Int = 0) throws -> HistoryPage {
        guard let state = users[user] else { throw ShopError.unknownUser(user) }
        return try self.page(of: state, page: page, perPage: perPage, shift: shift)
    }

    /// One page of the history `state` holds (`history`'s paging and checks).
    private func page(of state: UserState, page: Int, perPage: Int, shift: Int) throws -> HistoryPage {
        guard page >= 1 else { throw ShopError.badRequest("page must be 1 or more", code: "invalid_parameter") }
        guard (1...Paging.maxPerPage).contains(perPage) else {
            throw ShopError.badRequest("per_page must be between 1 and \(Paging.maxPerPage)", code: "invalid_parameter")
        }
        let paging = Paging(page: page, perPage: perPage, totalCount: state.added.count + state.base.count)
        let range = paging.range
        let shifted = max(0, range.lowerBound - shift)..<max(0, range.upperBound - shift)
        let entries = (range.isEmpty ? range : shifted).map { index in
            index < state.added.count
                ? state.added[index]
                : state.base.entry(at: index - state.added.count, packs: basePacks)
        }
        return HistoryPage(entries: entries, paging: paging)
    }

    // MARK: A lagging replica (the `stale_read` fault)

    /// What a read replica holds for `user` at `now`, when it is behind: lagging `lag` milliseconds, the
    /// state in force at `now − lag` (however many writes came since: a lag longer than the gap between
    /// two writes answers a state several writes old); `writes` set, the state `writes` writes back,
    /// whatever the time (a replica that stays behind until the next write). Nil when it has caught up.
    private func lagging(_ user: String, now: Double, lag: Int, writes: Int? = nil) -> UserState? {
        guard var state = users[user], let past = lastWrites[user], !past.isEmpty else { return nil }
        let old: LastWrite
        if let writes {
            guard writes >= 1, past.count >= writes else { return nil }
            old = past[past.count - writes]
        } else {
            // The oldest state replaced after the replica's horizon is the one it still holds.
            let horizon = now - Double(lag) / 1000
            guard let first = past.first(where: { $0.at > horizon }), now >= first.at else { return nil }
            old = first
        }
        state.balance = old.balance
        state.added = old.added
        return state
    }

    /// The balance a replica lagging `lag` ms answers at `now`, when it differs from the true one; nil
    /// when the read is fresh. Throws for an unknown user as `balance` does.
    public func staleBalance(user: String, now: Double, lag: Int, writes: Int? = nil) throws -> Int? {
        let fresh = try balance(user: user)
        guard let old = lagging(user, now: now, lag: lag, writes: writes), old.balance != fresh else { return nil }
        return old.balance
    }

    /// The history page a replica lagging `lag` ms answers at `now` (its entries and paging from the
    /// older list), when it differs from the true page; nil when the read is fresh. Throws as `history`.
    public func staleHistory(user: String, page: Int, perPage: Int, shift: Int = 0, now: Double, lag: Int, writes: Int? = nil) throws -> HistoryPage? {
        let fresh = try history(user: user, page: page, perPage: perPage, shift: shift)
        guard let old = lagging(user, now: now, lag: lag, writes: writes) else { return nil }
        let stale = try self.page(of: old, page: page, perPage: perPage, shift: shift)
        return stale == fresh ? nil : stale
    }

    /// Makes `state` the user's, remembering the state it replaces (and `now`) when the balance or the
    /// history changed: a write a lagging replica may not have seen yet.
    private func commit(_ state: UserState, for user: String, now: Double) {
        if let old = users[user], old.balance != state.balance || old.added != state.added {
            var past = lastWrites[user] ?? []
            past.append(LastWrite(balance: old.balance, added: old.added, at: now))
            if past.count > Self.pastStatesKept { past.removeFirst(past.count - Self.pastStatesKept) }
            lastWrites[user] = past
        }
        users[user] = state
    }

    /// Whether `transaction` (a purchase's key) was credited.
    public func hasCredited(transaction: String) -> Bool { credits[transaction] != nil }

    /// `unstable_entry`: whether this history read is an even one (the second, the fourth …).
    public func isEverySecondRead() -> Bool {
        historyReads += 1
        return historyReads % 2 == 0
    }

    // MARK: Writes

    /// Debits `amount`, adds it to the pack's cheer total and puts a history entry on top; answers the
    /// balance the shop answers (what it left, unless `quirks` say otherwise).
    public func spend(user: String, amount: Int, product: String, comment: String?, now: Double, quirks: Set<WriteQuirk> = []) throws -> Int {
        try spendLeniently(user: user, amount: amount, product: product, comment: comment, now: now, quirks: quirks).answer
    }

    /// Whose balance a write changes: `user`, or qa-alice for a user the shop does not know under
    /// `unknownUser` (else that user's 404).
    private func writer(_ user: String, _ lenient: Set<Leniency>, _ broke: inout Set<Leniency>) throws -> String {
        guard users[user] == nil else { return user }
        guard lenient.contains(.unknownUser) else { throw ShopError.unknownUser(user) }
        broke.insert(.unknownUser)
        return SeedData.alice
    }

    /// `spend`, with the rules in `lenient` not kept and the `quirks` asked for.
    public func spendLeniently(user: String, amount: Int, product: String, comment: String?, now: Double, quirks: Set<WriteQuirk> = [],
                               lenient: Set<Leniency> = []) throws -> WriteOutcome {
        var broke: Set<Leniency> = []
        let user = try writer(user, lenient, &broke)
        guard var state = users[user] else { throw ShopError.unknownUser(user) }
        if amount < 1 {
            guard lenient.contains(.nonPositiveAmount) else {
                throw ShopError.badRequest("amount must be a whole number of 1 or more", code: "invalid_amount")
            }
            broke.insert(.nonPositiveAmount)
        }
        let packIndex = packs.firstIndex(where: { $0.identifier == product })
        if packIndex == nil {
            guard lenient.contains(.unknownProduct) else { throw ShopError.badRequest("unknown product '\(product)'", code: "unknown_product") }
            broke.insert(.unknownProduct)
        }
        if state.balance < amount {
            guard lenient.contains(.overspend) else {
                throw ShopError(
                    status: 402, code: "insufficient_balance",
                    message: "balance \(state.balance) is less than \(amount); nothing was spent"
                )
            }
            broke.insert(.overspend)
        }
        let before = state.balance
        var took = quirks.intersection(quirks.contains(.noEntry) ? [.noEntry] : [.recordTwice])
        if quirks.contains(.noDebit) {
            if amount != 0 { took.insert(.noDebit) }
        } else {
            state.balance -= amount
        }
        let comments = comment.flatMap { $0.isEmpty ? nil : [CheerComment(signature: user, body: $0)] } ?? []
        for _ in 0..<(quirks.contains(.noEntry) ? 0 : quirks.contains(.recordTwice) ? 2 : 1) {
            spendCounter += 1
            state.added.insert(
                CheerHistoryEntry(
                    id: "h-\(user)-s\(spendCounter)", creator: packIndex.map { packs[$0].creator } ?? "unknown", amount: amount,
                    product: product, date: Int64(now), dateMillis: nil, comments: comments
                ),
                at: 0
            )
        }
        commit(state, for: user, now: now)
        if let packIndex, amount != 0 {
            if quirks.contains(.stuckTotal) { took.insert(.stuckTotal) } else { packs[packIndex].cheerTotal += amount }
        }
        return Self.outcome(before: before, after: state.balance, answer: state.balance, broke: broke, quirks: quirks, took: took)
    }

    /// A write's outcome; a `staleAnswer` quirk answers `before` in place of `answer` (taking effect
    /// when they differ).
    private static func outcome(before: Int, after: Int, answer: Int, broke: Set<Leniency>, quirks: Set<WriteQuirk>,
                                took: Set<WriteQuirk>) -> WriteOutcome {
        var result = WriteOutcome(before: before, after: after, answer: answer, broke: broke, took: took)
        if quirks.contains(.staleAnswer), answer != before {
            result.answer = before
            result.took.insert(.staleAnswer)
        }
        return result
    }

    /// Credits `amount` with no purchase (the `stray_credit` fault; `second_user_write` credits -1), at `now`.
    public func credit(user: String, amount: Int, now: Double = 0) throws {
        guard var state = users[user] else { throw ShopError.unknownUser(user) }
        state.balance += amount
        commit(state, for: user, now: now)
    }

    /// Drops the user's newest entry made by a spend (the `vanish_entry` fault); false when there is none.
    /// Data lost, not a write: a lagging replica's state stays as it was.
    public func dropNewestEntry(user: String) throws -> Bool {
        guard var state = users[user] else { throw ShopError.unknownUser(user) }
        guard !state.added.isEmpty else { return false }
        state.added.removeFirst()
        users[user] = state
        return true
    }

    /// Credits the bundle's amount once per App Store transaction (at `now`: when a lagging replica sees it).
    public func purchase(user: String, identifier: String, transactionID: UInt64, now: Double = 0) throws -> Int {
        try purchaseLeniently(user: user, identifier: identifier, transaction: String(transactionID), now: now).answer
    }

    /// `purchase`, with the rules in `lenient` not kept. `transaction` is the id's key: its digits (a
    /// negative one only under `accept_negative_transaction`), or `text:` and the string sent (only
    /// under `retyped_transaction`: a different key from the number, so it is credited again). Of the
    /// `quirks`, `noCredit` wins over `creditTwice`. `credit`: the cheer the App Store's record decided
    /// (nil: the identifier's bundle). `now`: when it is applied.
    public func purchaseLeniently(user: String, identifier: String, transaction: String, lenient: Set<Leniency> = [],
                                  quirks: Set<WriteQuirk> = [], credit: Int? = nil, now: Double = 0) throws -> WriteOutcome {
        var broke: Set<Leniency> = []
        let user = try writer(user, lenient, &broke)
        guard var state = users[user] else { throw ShopError.unknownUser(user) }
        let prefix = Self.bundlePrefix
        var amount = credit ?? Self.bundleAmount(of: identifier)
        if amount == nil, lenient.contains(.anyBundle), let n = identifier.split(separator: ".").last.flatMap({ Int($0) }) {
            amount = n
            broke.insert(.anyBundle)
        }
        guard let amount else {
            throw ShopError.badRequest(
                "unknown cheer bundle '\(identifier)'; known: "
                    + Self.bundleAmounts.map { "\(prefix)\($0)" }.joined(separator: ", "),
                code: "unknown_product"
            )
        }
        if credits[transaction] != nil, lenient.contains(.replayedTransaction) {
            broke.insert(.replayedTransaction)
        } else if credits[transaction] != nil {
            throw ShopError(
                status: 409, code: "duplicate_transaction",
                message: "transaction \(transaction.hasPrefix("text:") ? String(transaction.dropFirst(5)) : transaction) was already credited; nothing changed"
            )
        }
        let before = state.balance
        var took: Set<WriteQuirk> = []
        if quirks.contains(.noCredit) {
            if amount != 0 { took.insert(.noCredit) }
        } else {
            let twice = quirks.contains(.creditTwice) && amount != 0
            if twice { took.insert(.creditTwice) }
            credits[transaction, default: Credit(user: user, amount: 0)].amount += twice ? 2 * amount : amount
            state.balance += twice ? 2 * amount : amount
            commit(state, for: user, now: now)
        }
        // Under noCredit, the balance it would have left.
        let answer = quirks.contains(.noCredit) ? before + amount : state.balance
        return Self.outcome(before: before, after: state.balance, answer: answer, broke: broke, quirks: quirks, took: took)
    }
}

extension ShopStore {
    /// What the shop credited for the transaction with this key, if anything.
    public func credit(of transaction: String) -> Credit? { credits[transaction] }

    /// Takes back from its user what the shop credited for the transaction with this key and has not
    /// taken back yet (a backend acting on the App Store's REFUND notification); at `now`. Nil when the
    /// shop credited nothing for it.
    func takeBack(_ transaction: String, now: Double) -> (user: String, amount: Int)? {
        guard var credit = credits[transaction], var state = users[credit.user] else { return nil }
        let amount = credit.amount - credit.takenBack
        if amount != 0 {
            state.balance -= amount
            commit(state, for: credit.user, now: now)
            credit.takenBack += amount
            credits[transaction] = credit
        }
        return (credit.user, amount)
    }
}

extension Substring {
    func trimmingCharacters(in set: Character) -> String {
        var s = self
        while s.first == set { s = s.dropFirst() }
        while s.last == set { s = s.dropLast() }
        return String(s)
    }
}
