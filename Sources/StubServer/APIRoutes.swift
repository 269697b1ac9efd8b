import Foundation
import Hummingbird
import StubCore

/// The answers of the contract's operations.
struct PacksBody: ResponseEncodable {
    let packs: [AudioPack]
}

struct BalanceBody: ResponseEncodable {
    let balance: Int
}

/// `missing_balance`: a balance answer without its `balance`.
struct MissingBalanceBody: ResponseEncodable {
    let cheer: Int
}

extension HistoryPage: ResponseEncodable {}
extension TokenGrant: ResponseEncodable {}

extension StubService {
    /// One operation of the contract. Every route but `refreshToken` needs a valid access token; errors
    /// are thrown as `ShopError` (the error layer turns them into JSON).
    func respond(to operation: Operation, request: Request, context: StubContext) async throws -> Response {
        let now = Date().timeIntervalSince1970
        if operation != .refreshToken {
            do {
                try await store.authorize(header: request.headers[.authorization], now: now)
            } catch {
                // ignore_auth: the refusal is not made (the request goes on as if its token were valid).
                guard let fault = context.contentFault(.ignoreAuth) else { throw error }
                context.notes.applied(fault)
            }
        }
        let query = Self.queryParameters(request)
        switch operation {
        case .listAudioPacks:
            var packs = await store.audioPacks()
            if let hostile = context.contentFault(.hostile) {
                packs = HostileText.apply(to: packs)
                context.notes.applied(hostile)
            }
            return try PacksBody(packs: packs).response(from: request, context: context)
        case .getBalance:
            let user = try Self.requiredUser(query)
            if let fault = context.contentFault(.strayCredit) {
                try await store.credit(user: user, amount: 37, now: now)
                context.notes.applied(fault)
            }
            var balance = try await store.balance(user: user)
            if let fault = context.contentFault(.missingBalance) {
                context.notes.applied(fault)
                return try MissingBalanceBody(cheer: balance).response(from: request, context: context)
            }
            if let fault = context.contentFault(.staleRead), let stale = try await store.staleBalance(user: user, now: now, lag: fault.spec.ms, writes: fault.spec.writes) {
                balance = stale
                context.notes.applied(fault)
            }
            return try BalanceBody(balance: balance).response(from: request, context: context)
        case .getCheerHistory:
            let user = try Self.requiredUser(query)
            let pageNumber = try Self.intParameter(query, "page") ?? 1
            let perPage = try Self.intParameter(query, "per_page") ?? Paging.defaultPerPage
            if let fault = context.contentFault(.narrowPerPage), perPage > fault.spec.cap {
                context.notes.applied(fault)
                throw ShopError.badRequest("per_page must be at most \(fault.spec.cap)", code: "invalid_per_page")
            }
            if let fault = context.contentFault(.vanishEntry), try await store.dropNewestEntry(user: user) {
                context.notes.applied(fault)
            }
            let shifted = pageNumber > 1 ? context.contentFault(.shiftedPage) : nil
            let shift = shifted == nil ? 0 : 1
            var page: HistoryPage
            // stale_read: the page of the state the lagging replica holds (`ms` ago, or `writes` writes back).
            if let fault = context.contentFault(.staleRead),
               let stale = try await store.staleHistory(user: user, page: pageNumber, perPage: perPage, shift: shift, now: now, lag: fault.spec.ms,
                                                   writes: fault.spec.writes) {
                page = stale
                context.notes.applied(fault)
            } else {
                page = try await store.history(user: user, page: pageNumber, perPage: perPage, shift: shift)
            }
            if let shifted { context.notes.applied(shifted) }
            if let fault = context.contentFault(.shortPages), page.cut(to: fault.spec.cap) {
                context.notes.applied(fault)
            }
            if pageNumber > 1, let fault = context.contentFault(.driftingTotal), page.paging.totalCount > 0 {
                page.saidTotalCount = page.paging.totalCount - 1
                context.notes.applied(fault)
            }
            if let fault = context.contentFault(.hiddenPage), page.paging.totalPages >= 2 {
                page.saidTotalCount = (page.paging.totalPages - 1) * page.paging.perPage
                context.notes.applied(fault)
            }
            if let hostile = context.contentFault(.hostile), !page.entries.isEmpty {
                page = HostileText.apply(to: page)
                context.notes.applied(hostile)
            }
            if let malformed = context.contentFault(.malformedEntry), let broken = HostileText.malform(page, index: malformed.spec.index) {
                page = broken
                context.notes.applied(malformed)
            }
            if let fault = context.contentFault(.badPaging) {
                page.totalPagesError = 1
                context.notes.applied(fault)
            }
            if let fault = context.contentFault(.duplicateEntry), page.entries.count >= 2 {
                let i = min(max(1, fault.spec.index ?? 1), page.entries.count - 1)
                page.entries[i].id = page.entries[i - 1].id
                context.notes.applied(fault)
            }
            if let fault = context.contentFault(.unstableEntry), pageNumber == 1, !page.entries.isEmpty, await store.isEverySecondRead() {
                page.entries[0].amount += 1
                context.notes.applied(fault)
            }
            if let fault = context.contentFault(.outOfOrder), page.entries.count >= 2 {
                let i = min(max(0, fault.spec.index ?? 0), page.entries.count - 2)
                page.entries.swapAt(i, i + 1)
                context.notes.applied(fault)
            }
            return try page.response(from: request, context: context)
        case .purchaseCheer:
            await secondUserWrite(context, now: now)
            let body = try await request.decode(as: PurchaseBody.self, context: context)
            let key: String
            var used: [FaultHit] = []
            let bent = body.bent.flatMap { _ in context.contentFault(.lenientBody) }
            switch body.transaction {
            case let .number(n): key = String(n)
            case let .fraction(d): key = "fraction:" + String(d)
            case .missing: key = "missing:" + UUID().uuidString
            case let .negative(n):
                guard let fault = context.contentFault(.acceptNegativeTransaction) else { throw PurchaseBody.notUnsigned }
                key = String(n)
                used.append(fault)
            case let .text(text):
                guard let fault = context.contentFault(.retypedTransaction), !text.isEmpty, text.allSatisfy(\.isASCII), UInt64(text) != nil else {
                    throw PurchaseBody.notUnsigned
                }
                key = "text:" + text
                used.append(fault)
            }
            var (lenient, faults) = Self.faults(context, [(.acceptUnknownUser, ShopStore.Leniency.unknownUser), (.acceptAnyBundle, .anyBundle)])
            // replay_credit, or lenient_body's transaction-replayed: the same rule broken.
            let lenientReplay = context.contentFault(.lenientBody).flatMap { $0.spec.bodyCase == .transactionReplayed ? $0 : nil }
            if let replay = context.contentFault(.replayCredit) ?? lenientReplay {
                lenient.insert(.replayedTransaction)
                faults.append((.replayedTransaction, replay))
            }
            // race_replay: the transaction is checked new, then credited, with a wait between them and no second check.
            let race = context.contentFault(.raceReplay)
            if let race, await !store.hasCredited(transaction: key) {
                try? await Task.sleep(for: .milliseconds(race.spec.ms))
                lenient.insert(.replayedTransaction)
                faults.append((.replayedTransaction, race))
            }
            let (quirks, quirkFaults) = Self.faults(context, [(.doubleCredit, ShopStore.WriteQuirk.creditTwice), (.noCredit, .noCredit),
                                                             (.staleAnswer, .staleAnswer)])
            let outcome = try await purchase(user: Self.actingUser(query), identifier: body.identifier, transaction: key, lenient: lenient,
                                             quirks: quirks, context: context, now: now)
            for fault in used { context.notes.applied(fault) }
            if let bent { context.notes.applied(bent) }
            for (rule, fault) in faults where outcome.broke.contains(rule) { context.notes.applied(fault) }
            for (quirk, fault) in quirkFaults where outcome.took.contains(quirk) { context.notes.applied(fault) }
            try refuseButApply(context)
            return try BalanceBody(balance: outcome.answer).response(from: request, context: context)
        case .spendCheer:
            await secondUserWrite(context, now: now)
            let body = try await request.decode(as: SpendBody.self, context: context)
            var amount = body.amount
            var comment = body.comment
            if let fault = context.contentFault(.wrongDebit) {
                amount += 1
                context.notes.applied(fault)
            }
            if let fault = context.contentFault(.cutComment), let whole = comment, !whole.isEmpty {
                comment = String(whole.prefix(max(1, whole.count / 2)))
                context.notes.applied(fault)
            }
            if let fault = context.contentFault(.escapeMarkup), let whole = comment, whole.contains(where: { "<>&\"".contains($0) }) {
                comment = whole.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
                    .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
                context.notes.applied(fault)
            }
            if let fault = context.contentFault(.narrowText), let whole = comment, whole.unicodeScalars.contains(where: { $0.value > 0xFFFF }) {
                comment = String(String.UnicodeScalarView(whole.unicodeScalars.map { $0.value > 0xFFFF ? "?" : $0 }))
                context.notes.applied(fault)
            }
            var quirks: Set<ShopStore.WriteQuirk> = []
            for (kind, quirk) in [(FaultKind.doubleEntry, ShopStore.WriteQuirk.recordTwice), (.noEntry, .noEntry), (.noDebit, .noDebit), (.stuckTotal, .stuckTotal)] {
                if let fault = context.contentFault(kind) {
                    quirks.insert(quirk)
                    context.notes.applied(fault)
                }
            }
            let stale = context.contentFault(.staleAnswer)
            if stale != nil { quirks.insert(.staleAnswer) }
            let (rules, faults) = Self.faults(context, [(.acceptUnknownProduct, ShopStore.Leniency.unknownProduct), (.acceptOverspend, .overspend),
                                                          (.acceptNonpositiveAmount, .nonPositiveAmount), (.acceptUnknownUser, .unknownUser)])
            var lenient = rules
            if let fault = context.contentFault(.refuseWholeBalance), let balance = try? await store.balance(user: Self.actingUser(query)), amount == balance {
                context.notes.applied(fault)
                throw ShopError(status: 402, code: "insufficient_balance", message: "balance \(balance) is less than \(amount); nothing was spent")
            }
            // race_overspend: the check is made, then the debit, with a wait between them and no second check.
            let race = context.contentFault(.raceOverspend)
            if let race, let balance = try? await store.balance(user: Self.actingUser(query)), amount <= balance {
                try? await Task.sleep(for: .milliseconds(race.spec.ms))
                lenient.insert(.overspend)
            }
            let bent = body.bent.flatMap { _ in context.contentFault(.lenientBody) }
            // A product the lenient body filled in is in no pack list: taken as an unknown product.
            if bent != nil, [.productMissing, .productNotText, .bodyNotObject].contains(body.bent) { lenient.insert(.unknownProduct) }
            let future = context.contentFault(.futureDate)
            let outcome = try await store.spendLeniently(user: Self.actingUser(query), amount: amount, product: body.product, comment: comment,
                                                         now: future == nil ? now : now + 3600, quirks: quirks, lenient: lenient)
            if let future { context.notes.applied(future) }
            if let race, outcome.broke.contains(.overspend), !rules.contains(.overspend) { context.notes.applied(race) }
            if let bent { context.notes.applied(bent) }
            for (rule, fault) in faults where outcome.broke.contains(rule) { context.notes.applied(fault) }
            if let stale, outcome.took.contains(.staleAnswer) { context.notes.applied(stale) }
            try refuseButApply(context)
            return try BalanceBody(balance: outcome.answer).response(from: request, context: context)
        case .refreshToken:
            let body = try await request.decode(as: RefreshBody.self, context: context)
            return try await store.refresh(refreshToken: body.refreshToken, now: now).response(from: request, context: context)
        }
    }

    /// A purchase credited as the shop does: with `--appstore-verify`, once the App Store's record allows
    /// it and by what that record says (the waivers of the faults handed to the route; `unverified_credit`:
    /// without asking); else by the identifier's bundle. Each App Store fault is noted applied when it
    /// changed the outcome.
    func purchase(user: String, identifier: String, transaction: String, lenient: Set<ShopStore.Leniency>, quirks: Set<ShopStore.WriteQuirk>,
                  context: StubContext, now: Double) async throws -> ShopStore.WriteOutcome {
        guard appStoreVerify else {
            return try await store.purchaseLeniently(user: user, identifier: identifier, transaction: transaction, lenient: lenient, quirks: quirks, now: now)
        }
        if let fault = context.contentFault(.unverifiedCredit) {
            let outcome = try await store.purchaseLeniently(user: user, identifier: identifier, transaction: transaction, lenient: lenient,
                                                            quirks: quirks, now: now)
            let credited = ShopStore.bundleAmount(of: identifier) ?? outcome.after - outcome.before
            if await store.verifyingWouldDiffer(user: user, identifier: identifier, transaction: transaction, credited: credited) {
                context.notes.applied(fault)
            }
            return outcome
        }
        let (waivers, faults) = Self.faults(context, [(.trustProduct, AppStoreWaiver.trustProduct), (.ignoreQuantity, .ignoreQuantity),
                                                      (.keepRefunded, .keepRefunded), (.anyAccount, .anyAccount)])
        let (outcome, waived) = try await store.verifiedPurchase(user: user, identifier: identifier, transaction: transaction, waivers: waivers,
                                                                 lenient: lenient, quirks: quirks, now: now)
        for (waiver, fault) in faults where waived.contains(waiver) { context.notes.applied(fault) }
        return outcome
    }

    /// `refuse_but_apply`: the write was applied; answer the fault's 4xx all the same.
    func refuseButApply(_ context: StubContext) throws {
        guard let fault = context.contentFault(.refuseButApply) else { return }
        context.notes.applied(fault)
        let failed = fault.spec.status >= 500
        throw ShopError(status: fault.spec.status, code: failed ? "internal_error" : "invalid_request",
                        message: fault.spec.message ?? (failed ? "the server failed" : "the request was refused"))
    }

    /// `second_user_write`: each write, whatever becomes of it, debits the fault's user 1 cheer first.
    func secondUserWrite(_ context: StubContext, now: Double) async {
        guard let fault = context.contentFault(.secondUserWrite), (try? await store.credit(user: fault.spec.user, amount: -1, now: now)) != nil else { return }
        context.notes.applied(fault)
    }

    /// The faults of this request among `kinds`: what they let the store do (rules it may break, quirks),
    /// and the fault behind each (noted as applied only when the store broke that rule or the quirk took).
    static func faults<Rule: Hashable>(_ context: StubContext, _ kinds: [(FaultKind, Rule)]) -> (Set<Rule>, [(Rule, FaultHit)]) {
        var rules: Set<Rule> = []
        var faults: [(Rule, FaultHit)] = []
        for (kind, rule) in kinds {
            if let fault = context.contentFault(kind) {
                rules.insert(rule)
                faults.append((rule, fault))
            }
        }
        return (rules, faults)
    }

    /// Query parameters, percent-decoded; the first value wins when a name repeats.
    static func queryParameters(_ request: Request) -> [String: String] {
        var result: [String: String] = [:]
        for (key, value) in request.uri.queryParameters where result[String(key)] == nil {
            result[String(key)] = String(value)
        }
        return result
    }

    static func requiredUser(_ query: [String: String]) throws -> String {
        guard let user = query["user_id"], !user.isEmpty else {
            throw ShopError.badRequest("user_id is required", code: "missing_parameter")
        }
        return user
    }

    /// The contract does not say whose balance a write changes (in production the token names the user);
    /// the stand-in takes `user_id` from the query as GETs do, and qa-alice when it is absent.
    static func actingUser(_ query: [String: String]) -> String {
        query["user_id"].flatMap { $0.isEmpty ? nil : $0 } ?? SeedData.alice
    }

    static func intParameter(_ query: [String: String], _ name: String) throws -> Int? {
        guard let raw = query[name] else { return nil }
        guard let value = Int(raw) else {
            throw ShopError.badRequest("\(name) must be a whole number, not '\(raw)'", code: "invalid_parameter")
        }
        return value
    }
}
