import Foundation
import ShopAPI
import ShopCache

/// The one place state changes: `update(&state, message) -> effects` (Bubble Tea's Update). Pure —
/// no I/O, no clock but the one passed in — so every transition is a plain unit test.
public enum ShopUpdate {
    public static func update(_ state: inout AppState, _ message: Message, now: Date) -> [Effect] {
        switch message {
        case let .intent(intent):
            return handle(intent, &state, now: now)

        case let .cacheLoaded(generation, balance, packs, firstPage):
            guard generation == state.generation else { return [] }
            if let balance, state.balance.value == nil {
                state.balance.value = balance.value.balance
                state.balance.fetchedAt = balance.fetchedAt
                state.balance.source = .cached(reason: nil)
            }
            if let packs, state.packs.all.isEmpty {
                state.packs.all = packs.value.packs
                state.packs.unreadable = packs.value.unreadable
                state.packs.fetchedAt = packs.fetchedAt
                state.packs.source = .cached(reason: nil)
                state.packs.status = .loaded
                state.packs.refresh()
            }
            if let firstPage {
                let stale = StalePage(page: firstPage.value, fetchedAt: firstPage.fetchedAt, source: .cached(reason: nil))
                switch state.history.pages[1] {
                case let .loading(id, nil):
                    // Shown while page 1 loads; the live answer replaces it.
                    state.history.pages.set(1, .loading(requestID: id, stale: stale), current: state.history.page)
                case nil:
                    state.history.pages.set(1, .loaded(firstPage.value, fetchedAt: firstPage.fetchedAt, source: .cached(reason: nil)), current: state.history.page)
                default:
                    return []
                }
                if state.history.page == 1, state.history.totalPages == nil { adoptTotals(firstPage.value, &state.history) }
            }
            return []

        case let .balanceLoaded(generation, stamp, result, at):
            guard generation == state.generation else { return [] }
            state.balance.isLoading = false
            // Asked before a spend or purchase returned the balance: older than what we show.
            guard stamp == state.balance.stamp else { return [] }
            switch result {
            case let .success(balance):
                state.balance.value = balance.balance
                state.balance.fetchedAt = at
                state.balance.source = .live
                state.balance.lastError = nil
                return [.writeBalance(key: state.context.userKey, balance, fetchedAt: at)]
            case let .failure(error):
                state.balance.lastError = error
                if state.balance.value != nil {
                    // Keep what we had: a cached value survives every fault, marked with the reason.
                    state.balance.source = .cached(reason: error.shortReason)
                }
                state.notice = .error(error)
                return []
            }

        case let .packsLoaded(generation, result, at):
            guard generation == state.generation else { return [] }
            state.packs.isLoading = false
            switch result {
            case let .success(list):
                state.packs.all = list.packs
                state.packs.unreadable = list.unreadable
                state.packs.status = .loaded
                state.packs.source = .live
                state.packs.fetchedAt = at
                state.packs.refresh()
                return [.writePacks(key: state.context.shopKey, list, fetchedAt: at)] + reloadPacksIfAsked(&state)
            case let .failure(error):
                if state.packs.all.isEmpty {
                    state.packs.status = .failed(error.description)
                } else {
                    state.packs.source = .cached(reason: error.shortReason)
                }
                state.notice = .error(error)
                return reloadPacksIfAsked(&state)
            }

        case let .historyLoaded(generation, requestID, page, result, at):
            guard generation == state.generation else { return [] }
            // Only the request the page is waiting for counts; an evicted or superseded one is dropped.
            guard case let .loading(requestID: pending, stale) = state.history.pages[page], pending == requestID else { return [] }
            switch result {
            case let .success(historyPage):
                state.history.pages.set(page, .loaded(historyPage, fetchedAt: at, source: .live), current: state.history.page)
                var effects: [Effect] = page == 1 ? [.writeFirstPage(key: state.context.userKey, historyPage, fetchedAt: at)] : []
                if requestID >= state.history.totalsRequestID {
                    state.history.totalsRequestID = requestID
                    adoptTotals(historyPage, &state.history)
                    // The history shrank below the page on screen: go to its new last page.
                    if let total = state.history.totalPages, state.history.page > max(1, total) {
                        effects += goTo(page: max(1, total), &state)
                    }
                }
                clampHistorySelection(&state.history)
                return effects
            case let .failure(error):
                if let stale {
                    // Keep showing what we had, marked with why it is not fresh.
                    let reason = stale.source == .live ? "refresh failed: \(error.shortReason)" : error.shortReason
                    state.history.pages.set(page, .loaded(stale.page, fetchedAt: stale.fetchedAt, source: .cached(reason: reason)), current: state.history.page)
                } else {
                    state.history.pages.set(page, .failed(message: error.description, requestID: error.requestID), current: state.history.page)
                }
                if page == state.history.page { state.notice = .error(error) }
                return []
            }

        case let .actionFinished(generation, kind, result, at):
            guard generation == state.generation, case .pending = state.action?.phase else { return [] }
            let backgrounded = state.action?.backgrounded ?? false
            defer { if backgrounded { state.action = nil } }  // put away: the notice carries the outcome
            switch result {
            case let .success(balance):
                state.balance.value = balance.balance
                state.balance.fetchedAt = at
                state.balance.source = .live
                state.balance.lastError = nil
                state.balance.stamp += 1  // a balance request already out predates this one
                let text: String
                switch kind {
                case let .spend(_, name, amount, _): text = "Spent \(Wording.grouped(amount)) cheer on \(name). Balance \(Wording.grouped(balance.balance)) cheer."
                case let .purchase(identifier, _): text = "Bought \(identifier). Balance \(Wording.grouped(balance.balance)) cheer."
                }
                state.action = ActionState(phase: .succeeded(text))
                state.notice = Notice(.info, text)
                // The history gained an entry (spend) and the totals moved: reload what is shown.
                var effects: [Effect] = [.writeBalance(key: state.context.userKey, balance, fetchedAt: at)]
                if case .spend = kind {
                    effects += invalidateHistory(&state, merge: false)
                    if state.packs.isLoading { state.packs.reloadWhenDone = true } else { effects += loadPacks(&state) }
                }
                return effects
            case let .failure(error):
                let text = explain(error, kind: kind, state: state)
                state.action = ActionState(phase: .failed(text, requestID: error.requestID))
                state.notice = Notice(.error, text, requestID: error.requestID)
                // A refusal for lack of cheer means our balance was out of date; a write that got no
                // answer may have been applied. Either way, look again.
                if error.status == 402 { return loadBalance(&state) }
                if mayHaveBeenApplied(error) {
                    state.balance.stamp += 1
                    return loadBalance(&state) + invalidateHistory(&state, merge: false)
                }
                return []
            }

        case let .exchangeRecorded(exchange):
            let selectedID = state.requests.selected?.id
            state.requests.rows.insert(exchange, at: 0)
            if state.requests.rows.count > RequestsState.capacity { state.requests.rows.removeLast() }
            // Keep the same exchange selected while new ones arrive on top (unless the newest was selected).
            if let selectedID, state.requests.selectedIndex != 0,
               let index = state.requests.rows.firstIndex(where: { $0.id == selectedID })
            {
                state.requests.selectedIndex = index
            }
            return []

        case let .cancelled(generation, work):
            guard generation == state.generation else { return [] }
            switch work {
            case .balance: state.balance.isLoading = false
            case .packs:
                state.packs.isLoading = false
                if state.packs.status == .loading { state.packs.status = .idle }
            case let .history(requestID, page):
                guard case let .loading(pending, stale) = state.history.pages[page], pending == requestID else { return [] }
                if let stale {
                    state.history.pages.set(page, .loaded(stale.page, fetchedAt: stale.fetchedAt, source: stale.source), current: state.history.page)
                } else {
                    state.history.pages.remove(page)
                }
            case .action:
                if case .pending = state.action?.phase {
                    let text = "The request was cancelled before an answer came; it may have been applied — refresh to check."
                    state.action = ActionState(phase: .failed(text, requestID: nil))
                }
            }
            return []
        }
    }

    static func reloadPacksIfAsked(_ state: inout AppState) -> [Effect] {
        guard state.packs.reloadWhenDone else { return [] }
        state.packs.reloadWhenDone = false
        return loadPacks(&state)
    }

    // MARK: Intents

    static func handle(_ intent: Intent, _ state: inout AppState, now: Date) -> [Effect] {
        switch intent {
        case .start:
            var effects: [Effect] = [.readCache(generation: state.generation, user: state.context.userKey, shop: state.context.shopKey)]
            effects += loadBalance(&state) + loadPacks(&state) + loadHistoryPage(state.history.page, &state)
            return effects

        case .refresh:
            var effects = loadBalance(&state) + loadPacks(&state)
            effects += invalidateHistory(&state, merge: true)
            return effects

        case .refreshBalance:
            return loadBalance(&state)

        case .startBalance:
            return [.readCache(generation: state.generation, user: state.context.userKey, shop: state.context.shopKey)] + loadBalance(&state)

        case let .switchContext(baseURL, user):
            if case .pending = state.action?.phase {
                state.notice = Notice(.error, "A spend or purchase is on its way; switch when it has answered.")
                return []
            }
            let context = ShopContext(environment: state.context.environment, baseURL: baseURL, user: user, readOnly: state.context.readOnly)
            let generation = state.generation + 1
            let requests = state.requests
            let nextRequestID = state.history.nextRequestID
            state = AppState(context: context, historyPerPage: state.history.perPage, historyCapacity: state.history.pages.capacity)
            state.generation = generation
            state.requests = requests
            state.history.nextRequestID = nextRequestID  // ids are never reused, even across users
            return [.cancelAll] + handle(.start, &state, now: now)

        // Audio Packs
        case let .setPackFilter(text):
            state.packs.filter = text
            state.packs.refresh()
            return []
        case let .setPackSort(sort):
            state.packs.sort = sort
            state.packs.refresh()
            return []
        case let .movePackSelection(delta):
            state.packs.selectedIndex = clamp(state.packs.selectedIndex + delta, count: state.packs.visible.count)
            return []
        case let .selectPack(index):
            state.packs.selectedIndex = clamp(index, count: state.packs.visible.count)
            return []

        // History
        case .historyNextPage:
            return goTo(page: min(state.history.page + 1, state.history.lastPage), &state)
        case .historyPreviousPage:
            return goTo(page: max(1, state.history.page - 1), &state)
        case .historyFirstPage:
            return goTo(page: 1, &state)
        case .historyLastPage:
            return goTo(page: state.history.lastPage, &state)
        case let .historyGoTo(page):
            return goTo(page: min(max(1, page), state.history.lastPage), &state)
        case let .moveHistorySelection(delta):
            state.history.selectedIndex = clamp(state.history.selectedIndex + delta, count: state.history.rows.count)
            return prefetchIfNearEnd(&state)
        case let .selectHistoryRow(index):
            state.history.selectedIndex = clamp(index, count: state.history.rows.count)
            return prefetchIfNearEnd(&state)
        case .toggleComments:
            guard let item = state.history.selectedItem else { return [] }
            let key = state.history.key(of: item, at: state.history.selectedIndex)
            if state.history.expanded.contains(key) { state.history.expanded.remove(key) } else { state.history.expanded.insert(key) }
            return []
        case .retryHistoryPage:
            switch state.history.current {
            case .failed: return loadHistoryPage(state.history.page, &state, force: true)
            case let .loaded(page, at, source) where source != .live:
                return loadHistoryPage(state.history.page, &state, force: true, stale: StalePage(page: page, fetchedAt: at, source: source))
            default: return []
            }

        // Requests
        case let .moveRequestSelection(delta):
            state.requests.selectedIndex = clamp(state.requests.selectedIndex + delta, count: state.requests.rows.count)
            return []
        case let .selectRequest(index):
            state.requests.selectedIndex = clamp(index, count: state.requests.rows.count)
            return []

        // Actions
        case .beginSpend:
            guard refuseIfReadOnly(&state, what: "spending"), refuseIfBusy(&state) else { return [] }
            guard let pack = state.packs.selected else {
                state.notice = Notice(.error, "Select an Audio Pack to cheer for first.")
                return []
            }
            state.action = ActionState(phase: .editing(.spend(product: pack.identifier, productName: pack.name, amount: "", comment: ""), problem: nil))
            return []
        case let .beginPurchase(transactionID):
            guard refuseIfReadOnly(&state, what: "buying"), refuseIfBusy(&state) else { return [] }
            state.action = ActionState(phase: .editing(.purchase(identifier: "com.reiterate.cheer.200", transactionID: String(transactionID)), problem: nil))
            return []
        case let .editSpend(amount, comment):
            guard case let .editing(.spend(product, name, _, _), _) = state.action?.phase else { return [] }
            state.action = ActionState(phase: .editing(.spend(product: product, productName: name, amount: amount, comment: comment), problem: nil))
            return []
        case let .editPurchase(identifier, transactionID):
            guard case .editing(.purchase, _) = state.action?.phase else { return [] }
            state.action = ActionState(phase: .editing(.purchase(identifier: identifier, transactionID: transactionID), problem: nil))
            return []
        case .submitAction:
            return submit(&state)
        case .cancelAction:
            if case .pending = state.action?.phase { return [] }  // the request is out; its answer will come
            state.action = nil
            return []
        case .backgroundAction:
            if case .pending = state.action?.phase {
                state.action?.backgrounded = true
                state.notice = Notice(.info, "Still sending; the answer will show here.")
            }
            return []
        case .dismissNotice:
            state.notice = nil
            return []
        case let .notify(text):
            state.notice = Notice(.info, text)
            return []
        }
    }

    // MARK: Loading

    static func loadBalance(_ state: inout AppState) -> [Effect] {
        guard !state.balance.isLoading else { return [] }  // coalesced with the request in flight
        state.balance.isLoading = true
        return [.fetchBalance(generation: state.generation, user: state.context.user, stamp: state.balance.stamp)]
    }

    static func loadPacks(_ state: inout AppState) -> [Effect] {
        guard !state.packs.isLoading else { return [] }
        state.packs.isLoading = true
        if state.packs.all.isEmpty { state.packs.status = .loading }
        return [.fetchPacks(generation: state.generation)]
    }

    /// Fetches `page` unless it is resident (or in flight: coalesced). `force` refetches a loaded or
    /// failed page; `stale` is shown meanwhile.
    static func loadHistoryPage(_ page: Int, _ state: inout AppState, force: Bool = false, stale: StalePage? = nil) -> [Effect] {
        var stale = stale
        switch state.history.pages[page] {
        case .loading:
            state.history.pages.touch(page)
            return []
        case let .loaded(content, at, source):
            // A page shown from the cache is fetched live (showing the cached rows meanwhile).
            if !force, source == .live {
                state.history.pages.touch(page)
                return []
            }
            stale = stale ?? StalePage(page: content, fetchedAt: at, source: source)
        case .failed:
            if !force {
                state.history.pages.touch(page)
                return []
            }
        case nil:
            break
        }
        let requestID = state.history.nextRequestID
        state.history.nextRequestID += 1
        let evicted = state.history.pages.set(page, .loading(requestID: requestID, stale: stale), current: state.history.page)
        var effects: [Effect] = evicted.compactMap { slot in
            if case let .loading(id, _) = slot { return .cancelHistory(requestID: id) }
            return nil
        }
        effects.append(.fetchHistory(generation: state.generation, requestID: requestID, user: state.context.user, page: page, perPage: state.history.perPage))
        return effects
    }

    static func goTo(page: Int, _ state: inout AppState) -> [Effect] {
        if page != state.history.page {
            state.history.page = page
            state.history.selectedIndex = 0
        }
        var failed = false
        if case .failed = state.history.pages[page] { failed = true }
        let effects = loadHistoryPage(page, &state, force: failed)
        clampHistorySelection(&state.history)
        return effects
    }

    static func prefetchIfNearEnd(_ state: inout AppState) -> [Effect] {
        let rows = state.history.rows.count
        guard rows > 0, state.history.selectedIndex >= rows - HistoryState.prefetchDistance else { return [] }
        let next = state.history.page + 1
        guard let total = state.history.totalPages, next <= total, state.history.pages[next] == nil else { return [] }
        let effects = loadHistoryPage(next, &state)
        state.history.pages.touch(state.history.page)  // the page on screen stays the most recent
        return effects
    }

    /// Drops every resident page (the history changed) and reloads the one on screen, which keeps
    /// showing its old rows until the new ones come. With `merge`, a request already out for the page
    /// on screen is kept (a refresh while it loads sends nothing more); after a write it is replaced,
    /// since it was asked before the write.
    static func invalidateHistory(_ state: inout AppState, merge: Bool) -> [Effect] {
        let page = state.history.page
        let currentSlot = state.history.pages[page]
        if merge, case .loading = currentSlot {
            let others = state.history.pages.residentPages.filter { $0 != page }
            var cancels: [Effect] = []
            for other in others {
                if case let .loading(id, _) = state.history.pages[other] { cancels.append(.cancelHistory(requestID: id)) }
                state.history.pages.remove(other)
            }
            return cancels
        }
        var stale: StalePage?
        switch currentSlot {
        case let .loaded(content, fetchedAt, source): stale = StalePage(page: content, fetchedAt: fetchedAt, source: source)
        case let .loading(_, earlier): stale = earlier
        default: stale = nil
        }
        let cancels = state.history.pages.loadingRequestIDs.map { Effect.cancelHistory(requestID: $0) }
        state.history.pages.removeAll()
        state.history.totalsRequestID = 0
        return cancels + loadHistoryPage(page, &state, stale: stale)
    }

    static func adoptTotals(_ page: CheerHistoryPage, _ history: inout HistoryState) {
        history.totalPages = page.totalPages
        history.totalCount = page.totalCount
    }

    static func clampHistorySelection(_ history: inout HistoryState) {
        history.selectedIndex = clamp(history.selectedIndex, count: history.rows.count)
    }

    static func clamp(_ index: Int, count: Int) -> Int {
        min(max(0, index), max(0, count - 1))
    }

    // MARK: Actions

    static func refuseIfReadOnly(_ state: inout AppState, what: String) -> Bool {
        guard state.context.readOnly else { return true }
        state.notice = Notice(.error, "\(state.context.environment.uppercased()) is read-only: \(what) is disabled.")
        return false
    }

    /// One write at a time: a put-away spend or purchase still waiting refuses a new one.
    static func refuseIfBusy(_ state: inout AppState) -> Bool {
        guard case .pending = state.action?.phase else { return true }
        state.notice = Notice(.error, "A spend or purchase is still on its way; wait for its answer.")
        return false
    }

    static func submit(_ state: inout AppState) -> [Effect] {
        guard let phase = state.action?.phase else { return [] }
        let where_ = "as \(state.context.user) on \(state.context.environment.uppercased())"
        switch phase {
        case let .editing(form, _):
            switch form {
            case let .spend(product, name, amountText, comment):
                guard let amount = Int(amountText.trimmingCharacters(in: .whitespaces)), amount >= 1 else {
                    state.action = ActionState(phase: .editing(form, problem: "The amount is a whole number of cheer, 1 or more."))
                    return []
                }
                if let balance = state.balance.value, amount > balance {
                    state.action = ActionState(phase: .editing(form, problem: "That is more than the balance (\(Wording.grouped(balance)) cheer)."))
                    return []
                }
                let trimmed = comment.trimmingCharacters(in: .whitespacesAndNewlines)
                let kind = ActionKind.spend(product: product, productName: name, amount: amount, comment: trimmed.isEmpty ? nil : trimmed)
                state.action = ActionState(phase: .confirming(kind, summary: "Spend \(Wording.grouped(amount)) cheer on \(name) \(where_)?"))
            case let .purchase(identifier, transactionText):
                let id = identifier.trimmingCharacters(in: .whitespaces)
                guard !id.isEmpty else {
                    state.action = ActionState(phase: .editing(form, problem: "Name the cheer bundle, e.g. com.reiterate.cheer.200."))
                    return []
                }
                guard let transaction = UInt64(transactionText.trimmingCharacters(in: .whitespaces)) else {
                    state.action = ActionState(phase: .editing(form, problem: "The transaction id is a whole number (0 to 18446744073709551615)."))
                    return []
                }
                let kind = ActionKind.purchase(identifier: id, transactionID: transaction)
                // Bundles are named by their amount: com.reiterate.cheer.200 is 200 cheer.
                let amount = id.split(separator: ".").last.flatMap { Int($0) }
                let what = amount.map { "\(Wording.grouped($0)) cheer (\(id))" } ?? id
                state.action = ActionState(phase: .confirming(kind, summary: "Buy \(what), transaction \(transaction), \(where_)?"))
            }
            return []
        case let .confirming(kind, summary):
            guard refuseIfReadOnly(&state, what: "this") else { state.action = nil; return [] }
            state.action = ActionState(phase: .pending(kind, summary: summary))
            switch kind {
            case let .spend(product, _, amount, comment):
                return [.spend(generation: state.generation, amount: amount, product: product, comment: comment, user: state.context.user, kind: kind)]
            case let .purchase(identifier, transactionID):
                return [.purchase(generation: state.generation, identifier: identifier, transactionID: transactionID, user: state.context.user, kind: kind)]
            }
        case .pending:
            return []  // a second submit while the first is out is refused
        case .succeeded, .failed:
            state.action = nil
            return []
        }
    }

    /// A write whose request may have reached the server although no answer came back.
    static func mayHaveBeenApplied(_ error: ShopAPIError) -> Bool {
        if case let .transport(t, _) = error {
            switch t {
            case .timeout, .connectionLost: return true
            default: return false
            }
        }
        return false
    }

    /// 402 and 409 in plain words; a write without an answer says it may have been applied.
    static func explain(_ error: ShopAPIError, kind: ActionKind, state: AppState) -> String {
        if mayHaveBeenApplied(error) {
            return "\(error.description) — it may have been applied; refreshing the balance and history."
        }
        switch (error.status, kind) {
        case (402, let .spend(_, _, amount, _)):
            let said = error.serverMessage.map { " The server says: \($0)." } ?? ""
            return "Not enough cheer to spend \(Wording.grouped(amount)); nothing was spent.\(said) Refreshing the balance."
        case (409, let .purchase(_, transactionID)):
            return "Transaction \(transactionID) was already credited; nothing changed."
        default:
            return error.description
        }
    }
}
