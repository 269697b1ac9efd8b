import Foundation
import ShopAPI
import ShopLedger
import ShopModel
import ShopCache
import TerminalText

/// Owns the state on the main actor. Messages go in through `send`; the pure update function changes
/// the state and answers effects; the store runs them — in the order and grouping they carry — and
/// turns their results back into messages. Effects meant for the front end (quit, copy) go to
/// `onFrontEnd`. A front end only reads `state` (and redraws on `onChange`).
@MainActor
public final class AppStore {
    public private(set) var state: AppState
    /// Called after a message changed the state, on the main actor.
    public var onChange: ((AppState) -> Void)?
    /// Effects only a front end can carry out.
    public var onFrontEnd: ((Effect) -> Void)?
    /// The screen as text, as last drawn (a bug report quotes it); set by a front end.
    public var screenText: (() -> String?)?
    /// Where bug reports and HAR files go.
    public var evidence = EvidenceFiles()
    /// The environment's pins (`P`): the client checks every answer against them too.
    public var pins: PinStore?
    private var pinConfirmation: Task<Void, Never>?
    /// `D` and `S`: comparisons and snapshots, done by the program.
    public var comparer: (any Comparer)?
    /// `F`: faults put into the app's proxy, by the program.
    public var proxyFaults: (any ProxyFaultPutter)?
    /// The Purchases tab's ledger, read by the program (an environment with an App Store table).
    public var ledgerReader: (any LedgerReader)?
    /// The Session tab's test session, kept by the program (nil: the tab says sessions are not kept here).
    public var sessionKeeper: (any SessionKeeper)? {
        didSet { state.session.available = sessionKeeper != nil }
    }
    /// `X`: the explore campaign, run by the program.
    public var explorer: (any Explorer)?
    private var exploreTask: Task<ExploreDone, Never>?
    /// `X` stopped the campaign before its task had started: it is cancelled as soon as it starts.
    private var exploreStopAsked = false

    private let service: any ShopService
    private let cache: CacheStore?
    private let now: @Sendable () -> Date
    /// Requests in flight, by token (`.cancel` finds them here).
    private var requests: [Token: Task<Void, Never>] = [:]
    /// Tokens cancelled before their request started (a sequence had not reached it yet).
    private var cancelledEarly: Set<Token> = []
    /// Every effect task, so `settle` can wait for all of them.
    private var running: [UUID: Task<Void, Never>] = [:]
    private var exchangeObserver: Task<Void, Never>?
    /// The last 200 effects started (tests check ordering with it); bounded, so memory stays flat.
    public private(set) var effectLog: [Effect] = []

    public init(state: AppState, service: any ShopService, cache: CacheStore?, now: @escaping @Sendable () -> Date = { Date() }) {
        self.state = state
        self.service = service
        self.cache = cache
        self.now = now
    }

    public func send(_ message: Message) {
        let before = state
        let effects = ShopUpdate.update(&state, message)
        if state != before { onChange?(state) }
        // A judge's new findings go into the open test session (the contract's travel with their exchanges).
        if state.checks.generation != before.checks.generation, let journal = SessionJournal.active {
            for record in state.checks.fresh { record.outcome == .failed ? journal.finding(record.finding) : journal.passed(record.finding) }
        }
        if let waiting = held {
            held = waiting + effects
            return
        }
        for effect in effects { launch(effect) }
    }

    /// Effects asked for while held, in order (nil: not held).
    private var held: [Effect]?

    /// Holds the effects asked for from now on until `release()`: a front end draws its first frame
    /// before any request starts competing with it for the CPU.
    public func hold() {
        if held == nil { held = [] }
    }

    /// Starts the effects held, in the order they were asked for.
    public func release() {
        let waiting = held ?? []
        held = nil
        for effect in waiting { launch(effect) }
    }

    /// The cached balance, packs and first history page of the state's context, read at once (no
    /// actor hop, no task): for a front end's first frame. Nil without a cache. `firstPage: false`
    /// leaves the history page to an effect after the first frame (it opens on the Shop tab).
    public func cachedShopNow(firstPage: Bool = true) -> CachedShop? {
        guard let cache else { return nil }
        let keys = state.context
        return CachedShop(balance: cache.readNow(CheerBalance.self, kind: .balance, key: keys.userKey),
                          packs: cache.readNow(AudioPackList.self, kind: .packs, key: keys.shopKey),
                          firstPage: firstPage ? cache.readNow(CheerHistoryPage.self, kind: .historyFirstPage, key: keys.userKey) : nil,
                          firstPageDeferred: !firstPage,
                          timeline: cache.readNow(Timeline.self, kind: .timeline, key: keys.userKey)?.value)
    }

    /// Mirrors the REST core's exchange log into the requests inspector.
    public func observeExchanges() {
        guard exchangeObserver == nil else { return }
        let service = self.service
        exchangeObserver = Task {
            for await exchange in await service.exchangeUpdates() {
                self.send(.exchangeRecorded(exchange))
                if !exchange.isPending, let key = exchange.key, self.state.pinned.contains(key) { self.settlePins() }
            }
        }
    }

    /// An answer to a pinned request came: the pins whose last answer differed are read again until
    /// they settle (`PinStore.confirm`), so a `pinned` finding rests on two answers that agree. One run
    /// at a time; its reads show on the Requests tab like any other.
    private func settlePins() {
        guard let pins, pinConfirmation == nil else { return }
        let service = self.service
        pinConfirmation = Task {
            await pins.confirm { key in
                guard let request = ShopRequest(reading: key) else { return }
                _ = try? await service.send(request)
            }
            self.pinConfirmation = nil
        }
    }

    /// Waits until no effect is in flight (for `print` and tests).
    public func settle() async {
        while let task = running.values.first {
            await task.value
        }
    }

    /// Reads the open test session now and every `seconds` after, until `stop`: the Session tab, the
    /// Checks tab and the header follow what other commands add to it. Reading an unchanged record is a `stat`.
    public func followSession(every seconds: Double = 2) {
        guard let keeper = sessionKeeper else { return }
        spawn {
            while !Task.isCancelled {
                let read = await keeper.read()
                await self.send(.sessionRead(read))
                try? await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
            }
        }
    }

    public func stop() {
        requests.values.forEach { $0.cancel() }
        running.values.forEach { $0.cancel() }
        exchangeObserver?.cancel()
        exchangeObserver = nil
        pinConfirmation?.cancel()
        pinConfirmation = nil
    }

    // MARK: Running effects

    /// Starts an effect now: a cancellation or a front-end effect at once, other work as a task.
    private func launch(_ effect: Effect) {
        switch effect {
        case let .cancel(token):
            if let task = requests.removeValue(forKey: token) { task.cancel() } else { cancelledEarly.insert(token) }
        case .quit, .copy, .copyCurl, .alert:
            onFrontEnd?(effect)
        case let .writeReport(draft):
            // The screen now, before anything else is drawn: what the user saw when pressing R.
            let screen = screenText?()
            spawn { await self.writeReport(draft, screen: screen) }
        case .pin, .unpin:
            spawn { await self.changePins(effect) }
        case .stopExplore:
            if let exploreTask { exploreTask.cancel() } else { exploreStopAsked = true }
        default:
            if let token = effect.requestToken {
                // Registered at once, so a cancellation in the same turn finds it.
                let task = startRequest(effect, token: token)
                spawn { await task?.value }
            } else {
                spawn { await self.run(effect) }
            }
        }
    }

    /// Runs an effect to its end (a sequence one step after another, a batch all at once).
    private func run(_ effect: Effect) async {
        switch effect {
        case let .sequence(steps):
            for step in steps {
                guard !Task.isCancelled else { return }
                await run(step)
            }
        case let .batch(parts):
            await withTaskGroup(of: Void.self) { group in
                for part in parts {
                    if part.startsAtOnce { launch(part) } else { group.addTask { await self.run(part) } }
                }
            }
        case _ where effect.startsAtOnce:
            launch(effect)
        default:
            if let token = effect.requestToken {
                await startRequest(effect, token: token)?.value
            } else {
                log(effect)
                await perform(effect)
            }
        }
    }

    /// Runs `work` as a task that `settle()` waits for and `stop()` cancels.
    private func spawn(_ work: @escaping @Sendable () async -> Void) {
        let id = UUID()
        running[id] = Task {
            await work()
            self.running[id] = nil
        }
    }

    /// A request runs as its own task, registered under its token, so `.cancel(token)` can stop it
    /// wherever it was started from. A token cancelled before its start is answered as cancelled.
    private func startRequest(_ effect: Effect, token: Token) -> Task<Void, Never>? {
        if cancelledEarly.remove(token) != nil {
            send(.cancelled(token))
            return nil
        }
        log(effect)
        let task = Task {
            await self.request(effect, token: token)
            self.requests[token] = nil
        }
        requests[token] = task
        return task
    }

    private func log(_ effect: Effect) {
        effectLog.append(effect)
        if effectLog.count > 200 { effectLog.removeFirst(effectLog.count - 200) }
    }

    private func request(_ effect: Effect, token: Token) async {
        let service = self.service
        let message: Message?
        switch effect {
        case let .request(_, shopRequest):
            let sentAt = now()
            message = await Self.attempt { try await service.send(shopRequest) }.map { result in
                .answered(token, ShopReply(shopRequest, result.map(\.answer), requestID: try? result.get().requestID,
                                           sentAt: sentAt, answeredAt: now()))
            }
        case let .compare(_, a, b, what):
            let result = await comparer?.compare(a, with: b, what: what) ?? .failure(CompareFailure("comparing is not available here"))
            // Superseded (`.cancel(token)`) while it ran: its answer reaches nobody.
            message = Task.isCancelled ? nil : .compared(token, result)
        case let .wake(_, seconds):
            // Cancelled (the watch stopped, or moved) before its time: nothing is sent.
            let slept: Void? = try? await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
            message = slept == nil ? nil : .woke(token, at: now())
        default:
            message = nil
        }
        send(message ?? .cancelled(token))
    }

    private func perform(_ effect: Effect) async {
        switch effect {
        case let .putFault(spec):
            send(.proxy(.faultPut(await proxyFaults?.put(spec) ?? .failed("no app proxy runs in this session"))))
        case .explore:
            guard let explorer else { return send(.exploreDone(ExploreDone(summary: "", folder: nil, stopped: false, failure: "explore is not available here"))) }
            let task = Task { await explorer.explore { news in await self.send(.exploreNews(news)) } }
            exploreTask = task
            if exploreStopAsked { task.cancel() }
            exploreStopAsked = false
            // Stopped (X) or the session ending: the campaign is cancelled and ends with what it found.
            let done = await withTaskCancellationHandler { await task.value } onCancel: { task.cancel() }
            exploreTask = nil
            send(.exploreDone(done))
        case .readLedger:
            guard let ledgerReader else { return send(.ledgerRead(.failure(LedgerFailure("no App Store is configured for this environment")))) }
            send(.ledgerRead(await ledgerReader.readLedger(exchanges: state.exchanges)))
        case let .readAppStoreRecord(id):
            guard let ledgerReader else {
                return send(.appStoreRecordRead(AppStoreRecordRead(transactionID: id, paid: nil,
                                                                   line: "warning: no App Store is configured for this environment; the credit expected is the bundle's\n")))
            }
            send(.appStoreRecordRead(await ledgerReader.appStoreRecord(id)))
        case let .saveSnapshot(user):
            guard let comparer else { return send(.snapshotSaved(.failure(CompareFailure("snapshots are not available here")))) }
            send(.snapshotSaved(await comparer.saveSnapshot(user: user)))
        case let .readCache(token, userKey, shopKey):
            guard let cache else { return send(.cacheLoaded(token, balance: nil, packs: nil, firstPage: nil)) }
            send(.timelineLoaded(await cache.read(Timeline.self, kind: .timeline, key: userKey)?.value ?? Timeline(), user: userKey))
            let balance = await cache.read(CheerBalance.self, kind: .balance, key: userKey)
            let packs = await cache.read(AudioPackList.self, kind: .packs, key: shopKey)
            let firstPage = await cache.read(CheerHistoryPage.self, kind: .historyFirstPage, key: userKey)
            send(.cacheLoaded(token, balance: balance, packs: packs, firstPage: firstPage))
        case let .readCachedFirstPage(token, userKey):
            send(.cacheLoaded(token, balance: nil, packs: nil, firstPage: await cache?.read(CheerHistoryPage.self, kind: .historyFirstPage, key: userKey)))
        case let .writeBalance(key, value, fetchedAt):
            await cache?.write(value, kind: .balance, key: key, fetchedAt: fetchedAt)
        case let .writePacks(key, value, fetchedAt):
            await cache?.write(value, kind: .packs, key: key, fetchedAt: fetchedAt)
        case let .writeFirstPage(key, value, fetchedAt):
            await cache?.write(value, kind: .historyFirstPage, key: key, fetchedAt: fetchedAt)
        case let .writeTimeline(key, timeline):
            await cache?.write(timeline, kind: .timeline, key: key, fetchedAt: timeline.latest?.at ?? Date())
        case .readSession:
            send(.sessionRead(await sessionKeeper?.read() ?? SessionRead(view: nil)))
        case let .startSession(name):
            guard let sessionKeeper else { return send(.sessionChanged(.failure(SessionFailure("test sessions are not kept here")))) }
            send(.sessionChanged(await sessionKeeper.start(name: name).map { "opened the test session \(name): every command and this TUI append to it" }))
        case let .noteSession(text):
            guard let sessionKeeper else { return send(.sessionChanged(.failure(SessionFailure("test sessions are not kept here")))) }
            send(.sessionChanged(await sessionKeeper.note(text).map { "noted in the session" }))
        case .closeSession:
            guard let sessionKeeper else { return send(.sessionChanged(.failure(SessionFailure("test sessions are not kept here")))) }
            send(.sessionChanged(await sessionKeeper.close()))
        case .makeTransactionID:
            send(.transactionIDMade(UInt64.random(in: 1...UInt64.max)))
        case .writeHAR:
            await writeHAR()
        case let .saveCurl(copy):
            await saveCurl(copy)
        default:
            break
        }
    }

    // MARK: Pins (P)

    private func changePins(_ effect: Effect) async {
        guard let pins else { return send(.pinsChanged(state.pinned, .failed("No folder for pins: set XDG_STATE_HOME or HOME."))) }
        do {
            switch effect {
            case let .pin(pin):
                try await pins.add(pin)
                send(.pinsChanged(await pins.requests, .pinned(pin.request)))
            case let .unpin(request):
                try await pins.remove(request)
                send(.pinsChanged(await pins.requests, .unpinned(request)))
            default: break
            }
        } catch {
            send(.pinsChanged(await pins.requests, .failed("The pins could not be saved: check that \(Sanitizer.line(pins.path ?? "")) is in a writable folder.")))
        }
    }

    // MARK: Evidence (R and e): the files are `EvidenceFiles`' to write

    private func writeReport(_ draft: BugReport, screen: String?) async {
        let at = now()
        let result = await evidence.writeReport(draft.markdown(at: at, version: evidence.version, screen: screen), at: at)
        if case let .success(path) = result { SessionJournal.wrote(path, what: "bug report") }
        send(.evidenceWritten(.report, result))
    }

    private func writeHAR() async {
        let exchanges = await service.recordedExchanges()
        let data: Data
        do {
            data = try HAR.encode(exchanges, baseURL: state.context.baseURL, creator: "reiterate-shop", version: evidence.version)
        } catch {
            return send(.evidenceWritten(.har(count: exchanges.count), .failure(EvidenceError("The HAR file could not be made from this session's requests."))))
        }
        let written = await evidence.writeHAR(data, at: now())
        if case let .success(path) = written { SessionJournal.wrote(path, what: "HAR") }
        send(.evidenceWritten(.har(count: exchanges.count), written))
    }

    /// `c` where no clipboard is known to take the line: `curl-<time>.sh` in the reports folder.
    private func saveCurl(_ copy: CurlCopy) async {
        let saved = await evidence.saveCurl(copy.command, at: now())
        if case let .success(path) = saved { SessionJournal.wrote(path, what: "curl line") }
        send(.curlSaved(copy, saved))
    }

    /// The call's result, or nil when it was cancelled (a cancelled request's answer reaches nobody).
    private static func attempt<T: Sendable>(_ call: @Sendable () async throws -> T) async -> Result<T, ShopAPIError>? {
        do {
            return .success(try await call())
        } catch let error as ShopAPIError {
            return .failure(error)
        } catch is CancellationError {
            return nil
        } catch {
            return .failure(.configuration(.unexpected))
        }
    }
}

extension CacheKind {
    /// The cache files the app keeps: a user's balance and first history page, the shop's packs.
    public static let balance: CacheKind = "balance"
    public static let packs: CacheKind = "packs"
    public static let historyFirstPage: CacheKind = "history-page1"
    /// A user's states as this machine's writes came to know them (`Timeline`).
    public static let timeline: CacheKind = "timeline"
}
