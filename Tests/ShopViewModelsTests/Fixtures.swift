import Foundation
import HTTPTypes
import Testing
import ShopAPI
import ShopCache
import struct StubCore.Paging
@testable import ShopViewModels

let t0 = Date(timeIntervalSince1970: 1_795_300_000)
let alice = ShopContext(environment: "staging", baseURL: "http://shop.test", user: "qa-alice")

func pack(_ id: String, _ name: String, creator: String = "C", price: Int = 99, cheer: Int = 0, tags: [String] = []) -> AudioPack {
    AudioPack(identifier: id, name: name, creator: creator, priceCents: price, cheerTotal: cheer, tags: tags)
}

let samplePacks = AudioPackList(packs: [
    pack("com.reiterate.pack.rain", "Rain on a Tin Roof", creator: "Field & Foley", price: 199, cheer: 50, tags: ["rain"]),
    pack("com.reiterate.pack.cafe-flore", "Café de Flore Mornings", creator: "Amélie Durand", price: 0, cheer: 900, tags: ["café"]),
    pack("com.reiterate.pack.tokyo-night", "東京 Night Walk", creator: "佐藤 健二", price: 499, cheer: 10, tags: ["city"]),
    pack("com.reiterate.pack.zurich-tram", "Zürich Tram Lines", creator: "Jürg Meier", price: 99, cheer: 300, tags: ["transport"]),
])

/// The `i`th newest entry of `user`'s history (Alice's are `h0`, `h1`…; another user's are their own).
func entry(_ i: Int, user: String = alice.user, comments: [CheerComment]? = []) -> CheerHistoryEntry {
    CheerHistoryEntry(id: user == alice.user ? "h\(i)" : "\(user)/h\(i)", creator: "C", amount: 5, product: "p",
                      date: t0.addingTimeInterval(Double(-i)), comments: comments)
}

/// Page `page` of `perPage` of `user`'s history of `total` entries, cut as the stand-in server cuts
/// its pages (`StubCore.Paging`, the server's side of the contract, not the app's): the page and
/// per-page asked, the last page short, a page past the end empty.
func historyPage(_ page: Int, perPage: Int = 50, total: Int = 230, user: String = alice.user) -> CheerHistoryPage {
    let paging = Paging(page: page, perPage: perPage, totalCount: total)
    let items = paging.range.map { HistoryItem.entry(entry($0, user: user)) }
    return CheerHistoryPage(items: items, page: page, perPage: perPage, totalPages: paging.totalPages, totalCount: total)
}

let refused = ShopAPIError.transport(.connectionRefused(host: "shop.test"), endpoint: .get("/api/v1/balance"))

func http(_ status: Int, _ code: String, _ message: String = "m") -> ShopAPIError {
    .http(status: status, message: message, code: code, requestID: "rq-1", endpoint: .post("/x"), retryAfter: nil)
}

/// What a test asks for, as the user would: each step is the messages a front end sends for it
/// (keys resolved to actions, typed text), run through the one update function.
enum Step {
    case start, startBalance, refresh
    case historyNextPage, historyPreviousPage, historyFirst, historyLast
    case goTo(String), find(String), nextMatch, previousMatch, escape
    case moveHistorySelection(Int), selectHistoryRow(index: Int), toggleComments, retryHistoryPage
    case movePackSelection(Int), selectPack(index: Int), setPackFilter(String), setPackSort(PackSort)
    case selectRequest(index: Int)
    case beginSpend, editSpend(amount: String, comment: String)
    case beginPurchase(transactionID: UInt64), editPurchase(identifier: String, transactionID: String)
    case submitAction, cancelAction, dismissNotice
}

/// Runs the pure update function, collecting effects (flattened: sequences and batches opened).
struct Driver {
    var state: AppState
    var effects: [Effect] = []
    /// History requests `serveHistory` has answered.
    var answeredHistory = Set<Token>()

    init(_ context: ShopContext = alice, capacity: Int = 8) {
        state = AppState(context: context, historyCapacity: capacity)
    }

    @discardableResult
    mutating func send(_ step: Step) -> [Effect] {
        var out: [Effect] = []
        func tab(_ tab: Tab) -> [Message] { state.screen.tab == tab ? [] : [.action(tab == .shop ? .shop : tab == .history ? .history : .requests)] }
        switch step {
        case .start: out = apply(.start)
        case .startBalance: out = apply(.startBalance)
        case .refresh: out = apply(.action(.refresh))
        case .historyNextPage: out = run(tab(.history) + [.action(.nextPage)])
        case .historyPreviousPage: out = run(tab(.history) + [.action(.previousPage)])
        case .historyFirst: out = run(tab(.history) + [.action(.first)])
        case .historyLast: out = run(tab(.history) + [.action(.last)])
        case let .goTo(text): out = run(tab(.history) + [.action(.goTo)] + text.map { .text($0) } + [.action(.runPrompt)])
        case let .find(text): out = run(tab(.history) + [.action(.find)] + text.map { .text($0) } + [.action(.runPrompt)])
        case .nextMatch: out = run(tab(.history) + [.action(.nextMatch)])
        case .previousMatch: out = run(tab(.history) + [.action(.previousMatch)])
        case .escape: out = apply(.action(.back))
        case let .moveHistorySelection(n): out = run(tab(.history) + Array(repeating: .action(n < 0 ? .up : .down), count: abs(n)))
        case let .selectHistoryRow(index): out = run(tab(.history) + [.action(.first)] + Array(repeating: .action(.down), count: index))
        case .toggleComments, .retryHistoryPage: out = run(tab(.history) + [.action(.toggle)])
        case let .movePackSelection(n): out = run(tab(.shop) + Array(repeating: .action(n < 0 ? .up : .down), count: abs(n)))
        case let .selectPack(index): out = run(tab(.shop) + [.action(.first)] + Array(repeating: .action(.down), count: index))
        case let .setPackFilter(text):
            out = run(tab(.shop) + [.action(.filter), .action(.clearFilter)])
            if !text.isEmpty { out += run([.action(.filter)] + text.map { .text($0) } + [.action(.keepFilter)]) }
        case let .setPackSort(sort):
            out = run(tab(.shop))
            for _ in PackSort.allCases where state.packs.sort != sort { out += apply(.action(.sort)) }
        case let .selectRequest(index): out = run(tab(.requests) + [.action(.first)] + Array(repeating: .action(.down), count: index))
        case .beginSpend: out = run(tab(.shop) + [.action(.spend)])
        case let .editSpend(amount, comment), let .editPurchase(amount, comment):
            out = fill(amount, comment)
        case let .beginPurchase(id): out = run([.action(.buy), .transactionIDMade(id)])
        case .submitAction:
            switch state.mode {
            case .confirm: out = apply(.action(.confirm))
            case .outcome: out = apply(.action(.dismiss))
            default: out = apply(.action(.submit))
            }
        case .cancelAction: out = apply(.action(state.mode == .outcome ? .dismiss : .cancel))
        case .dismissNotice: out = apply(.action(.back))
        }
        return out
    }

    /// Replaces both dialog fields, as typing would.
    mutating func fill(_ first: String, _ second: String) -> [Effect] {
        var out: [Effect] = []
        for (field, text) in [first, second].enumerated() {
            if state.write.action?.field != field { out += apply(.action(.nextField)) }
            for _ in 0..<(currentField(field)?.count ?? 0) { out += apply(.action(.deleteChar)) }
            out += run(text.map { .text($0) })
        }
        return out
    }

    func currentField(_ field: Int) -> String? {
        guard case let .editing(form, _) = state.write.action?.phase else { return nil }
        return form[field]
    }

    mutating func run(_ messages: [Message]) -> [Effect] {
        messages.flatMap { apply($0) }
    }

    /// What the request `token` asked, among the effects so far.
    func asked(_ token: Token) -> ShopRequest? {
        for effect in effects.reversed() {
            if case let .request(t, request) = effect, t == token { return request }
        }
        return nil
    }

    /// Applies `message`; an answer to a request it saw asked is labelled with what was asked (its user,
    /// page and per-page), whatever label the test's helper gave it.
    @discardableResult
    mutating func apply(_ message: Message) -> [Effect] {
        var message = message
        if case let .answered(token, reply) = message, let asked = asked(token) {
            var labelled = reply
            labelled.request = asked
            message = .answered(token, labelled)
        }
        var produced = ShopUpdate.update(&state, message).flatMap(\.flattened)
        effects += produced
        if servesBaseline, state.write.verification?.isBaseline == true { produced += serveBaseline(produced) }
        return produced
    }

    /// Whether the reads a write's baseline asks are answered at once with what the state holds (a write
    /// then goes out as it did when it was sent on the screen's values); false: the test answers them.
    var servesBaseline = true

    /// Answers the baseline reads among `asked` with the state's own balance, first page and packs.
    mutating func serveBaseline(_ asked: [Effect]) -> [Effect] {
        var out: [Effect] = []
        let at = state.clock ?? Date(timeIntervalSince1970: 0)
        for effect in asked {
            guard case let .request(token, request) = effect, state.write.verification?.isBaseline == true else { continue }
            switch request {
            case .balance:
                out += apply(.balanceLoaded(token, .success(CheerBalance(balance: state.balance.value ?? 0)), at: at))
            case .history(_, 1, _):
                let page = state.history.pages[1]?.value ?? CheerHistoryPage(items: [], page: 1, perPage: 50, totalPages: 0,
                                                                             totalCount: state.history.totalCount ?? 0)
                out += apply(.historyLoaded(token, page: 1, .success(page), at: at))
            case .packs:
                out += apply(.packsLoaded(token, .success(state.packs.list.value ?? AudioPackList(packs: [], unreadable: [])), at: at))
            default:
                continue
            }
        }
        return out
    }

    /// The token of the last history fetch for `page` among `effects`.
    func requestID(forPage page: Int, in list: [Effect]? = nil) -> Token? {
        for effect in (list ?? effects).reversed() {
            if case let .request(token, .history(_, p, _)) = effect, p == page { return token }
        }
        return nil
    }

    /// The tokens of the requests the resources wait for (a dead token when none is out).
    var balanceToken: Token { state.token(for: .balance) ?? Token(-1) }
    var packsToken: Token { state.token(for: .packs) ?? Token(-1) }
    var cacheToken: Token { state.token(for: .cacheRead) ?? Token(-1) }
    var actionToken: Token { state.token(for: .write) ?? Token(-1) }

    /// Started, with the packs, a balance of 1,250 and the first history page (of 230 entries) in.
    static func loaded() -> Driver {
        var d = Driver()
        d.send(.start)
        d.apply(.packsLoaded(d.packsToken, .success(samplePacks), at: t0))
        d.apply(.balanceLoaded(d.balanceToken, .success(CheerBalance(balance: 1250)), at: t0))
        d.loadPage(1)
        return d
    }

    mutating func loadPage(_ page: Int, total: Int = 230) {
        guard let token = requestID(forPage: page), case let .history(user, _, perPage)? = asked(token) else { return }
        answeredHistory.insert(token)
        apply(.historyLoaded(token, page: page, .success(historyPage(page, perPage: perPage, total: total, user: user)), at: t0))
    }

    /// Answers every history request out (and those the answers ask for) from `source`, as a server
    /// would, until none is left; answers how many it answered. `limit` stops a runaway loop.
    @discardableResult
    mutating func serveHistory(_ source: (Int, Int) -> CheerHistoryPage, limit: Int = 10_000) -> Int {
        var served = 0
        while served < limit {
            let cancelled = Set(effects.compactMap { if case let .cancel(t) = $0 { return t } else { return nil } })
            guard let next = effects.first(where: {
                if case let .request(t, .history(_, _, _)) = $0 { return !answeredHistory.contains(t) && !cancelled.contains(t) }
                return false
            }), case let .request(token, .history(_, page, perPage)) = next else { break }
            answeredHistory.insert(token)
            served += 1
            apply(.historyLoaded(token, page: page, .success(source(page, perPage)), at: t0))
        }
        return served
    }
}

/// A scripted REST core: counts calls, can hold answers until released, can fail.
actor FakeShop: ShopService {
    var balanceValue = 1250
    var balanceError: ShopAPIError?
    var spendError: ShopAPIError?
    var holdBalance = false
    var holdSpend = false
    var holdHistory = false
    var holdPacks = false
    private(set) var calls: [String] = []
    private(set) var cancelledHistoryPages: [Int] = []
    private var gates: [CheckedContinuation<Void, Never>] = []
    private let exchanges: AsyncStream<Exchange>
    let exchangeSink: AsyncStream<Exchange>.Continuation

    init() {
        (exchanges, exchangeSink) = AsyncStream<Exchange>.makeStream()
    }

    func configure(_ change: @Sendable (FakeShop) async -> Void) async { await change(self) }
    func set(balance: Int) { balanceValue = balance }
    func set(balanceError: ShopAPIError?) { self.balanceError = balanceError }
    func set(spendError: ShopAPIError?) { self.spendError = spendError }
    func set(holdBalance: Bool) { self.holdBalance = holdBalance }
    func set(holdSpend: Bool) { self.holdSpend = holdSpend }
    func set(holdHistory: Bool) { self.holdHistory = holdHistory }
    func set(holdPacks: Bool) { self.holdPacks = holdPacks }

    func count(_ prefix: String) -> Int { calls.filter { $0.hasPrefix(prefix) }.count }

    /// Releases every held call.
    func release() {
        gates.forEach { $0.resume() }
        gates = []
    }

    var heldCount: Int { gates.count }

    /// Releases only the most recent held call.
    func releaseLast() {
        if !gates.isEmpty { gates.removeLast().resume() }
    }

    private func hold() async {
        await withCheckedContinuation { gates.append($0) }
    }

    /// Answers each request by what it asks: the user, the page and the per-page asked.
    func send(_ request: ShopRequest) async throws -> (answer: ShopAnswer, requestID: String?) {
        switch request {
        case let .balance(user): return (.balance(try await balance(user: user)), nil)
        case .packs: return (.packs(try await audioPacks()), nil)
        case let .history(user, page, perPage): return (.history(try await history(user: user, page: page, perPage: perPage)), nil)
        case let .write(.spend(s), user): return (.balance(try await spend(amount: s.amount, product: s.product, comment: s.comment, user: user)), nil)
        case let .write(.purchase(p), user): return (.balance(try await purchase(identifier: p.identifier, transactionID: p.transactionID, user: user)), nil)
        }
    }

    private func balance(user: String) async throws -> CheerBalance {
        calls.append("balance \(user)")
        let value = balanceValue  // what the server had when the request arrived
        if holdBalance { await hold() }
        if let balanceError { throw balanceError }
        return CheerBalance(balance: user == "qa-alice" ? value : 7)
    }

    private func audioPacks() async throws -> AudioPackList {
        calls.append("packs")
        if holdPacks { await hold() }
        return samplePacks
    }

    private func history(user: String, page: Int, perPage: Int) async throws -> CheerHistoryPage {
        calls.append("history \(user) \(page)")
        if holdHistory { await hold() }
        if Task.isCancelled {
            cancelledHistoryPages.append(page)
            throw CancellationError()
        }
        return historyPage(page, perPage: perPage, user: user)
    }

    private func spend(amount: Int, product: String, comment: String?, user: String) async throws -> CheerBalance {
        calls.append("spend \(amount) \(product)")
        if holdSpend { await hold() }
        if let spendError { throw spendError }
        balanceValue -= amount
        return CheerBalance(balance: balanceValue)
    }

    private func purchase(identifier: String, transactionID: TransactionID, user: String) async throws -> CheerBalance {
        calls.append("purchase \(identifier) \(transactionID)")
        balanceValue += 200
        return CheerBalance(balance: balanceValue)
    }

    nonisolated func exchangeUpdates() async -> AsyncStream<Exchange> { exchanges }
    /// What a HAR file of the session holds (set by a test).
    var recorded: [Exchange] = []
    func set(recorded: [Exchange]) { self.recorded = recorded }
    func recordedExchanges() async -> SessionExchanges { SessionExchanges(kept: recorded) }
}

func exchange(_ id: Int, status: Int = 200, method: String = "GET", path: String = "/api/v1/balance?user_id=qa-alice") -> Exchange {
    Exchange(
        id: id, method: method, path: path, startedAt: t0, duration: .milliseconds(12), status: status,
        failure: nil, requestID: "rq-\(id)", attempt: 1, requestBytes: 0, responseBytes: 16,
        requestHeaders: [.authorization: "<redacted>"], responseHeaders: [.contentType: "application/json"],
        requestBodyPreview: nil, responseBodyPreview: #"{"balance":1250,"nested":{"a":[1,2]}}"#
    )
}

/// Polls `condition` on the main actor until it holds (or 5 s pass).
@MainActor
func eventually(_ condition: () async -> Bool) async -> Bool {
    for _ in 0..<500 {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))  // pace of the poll
    }
    return false
}

@MainActor
extension AppStore {
    /// A test step sent as the front end would: the messages for it, one at a time, against the live state.
    func perform(_ step: Step) {
        func tab(_ tab: Tab, _ action: Action) {
            if state.screen.tab != tab { send(.action(action)) }
        }
        switch step {
        case .start: send(.start)
        case .startBalance: send(.startBalance)
        case .refresh: send(.action(.refresh))
        case .historyNextPage:
            tab(.history, .history)
            send(.action(.nextPage))
        case .beginSpend:
            tab(.shop, .shop)
            send(.action(.spend))
        case let .editSpend(first, second):
            for (field, text) in [first, second].enumerated() {
                if state.write.action?.field != field { send(.action(.nextField)) }
                for c in text { send(.text(c)) }
            }
        case .submitAction:
            switch state.mode {
            case .confirm: send(.action(.confirm))
            case .outcome: send(.action(.dismiss))
            default: send(.action(.submit))
            }
        default:
            Issue.record("the store helper does not send \(step)")
        }
    }
}

/// A shop request's reply as the store sends it (answered at `at`), by what the request was. The label
/// here is Alice's (the fixtures' user); `Driver.apply` relabels an answer with what its token asked.
extension Message {
    static func balanceLoaded(_ token: Token, _ result: Result<CheerBalance, ShopAPIError>, at: Date) -> Message {
        .answered(token, ShopReply(.balance(user: alice.user), result.map(ShopAnswer.balance), sentAt: at))
    }
    static func packsLoaded(_ token: Token, _ result: Result<AudioPackList, ShopAPIError>, at: Date) -> Message {
        .answered(token, ShopReply(.packs, result.map(ShopAnswer.packs), sentAt: at))
    }
    static func historyLoaded(_ token: Token, page: Int, _ result: Result<CheerHistoryPage, ShopAPIError>, at: Date) -> Message {
        let perPage = (try? result.get())?.perPage ?? CheerHistory(user: alice.user).perPage
        return .answered(token, ShopReply(.history(user: alice.user, page: page, perPage: perPage), result.map(ShopAnswer.history), sentAt: at))
    }
    /// A spend's or a purchase's answer (both answer with the balance).
    static func actionFinished(_ token: Token, _ result: Result<CheerBalance, ShopAPIError>, at: Date) -> Message {
        .answered(token, ShopReply(.write(.spend(product: "p", amount: 1, comment: nil), user: alice.user), result.map(ShopAnswer.balance), sentAt: at))
    }
    /// A watch read's answer, with the request id it came with.
    static func watchLoaded(_ token: Token, _ result: Result<ShopAnswer, ShopAPIError>, requestID: String? = nil, at: Date) -> Message {
        .answered(token, ShopReply(.balance(user: alice.user), result, requestID: requestID, sentAt: at))
    }
}

/// The notes the proxy's faults leave on an exchange (as `InjectedFault.note` makes them; the view
/// models know no proxy).
extension FaultNote {
    static let loseAnswer = FaultNote(name: "lose_answer", reachedServer: true, appGotAnswer: false,
                                      effect: "the server's answer was read and recorded, and the app's connection closed without it")
    static let status = FaultNote(name: "status", reachedServer: false, appGotAnswer: false,
                                  effect: "the proxy answered in the server's stead; the request never reached the server")
}
