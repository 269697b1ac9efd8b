import Foundation
import ShopAPI
import ShopCache

/// The history's pages: loading them (coalesced, bounded), their answers, totals that change under the
/// list, and the cached first page.
extension ShopUpdate {
    // MARK: pages

    /// The cached first page: shown at once, replaced by the live answer.
    static func cachedFirstPage(_ firstPage: CacheEntry<CheerHistoryPage>, _ state: inout AppState) {
        let stale = StalePage(page: firstPage.value, fetchedAt: firstPage.fetchedAt, source: .cached(reason: nil))
        switch state.history.pages[1] {
        case let .loading(token, nil):
            state.history.pages.set(1, .loading(token: token, stale: stale), current: state.history.page)
        case nil:
            state.history.pages.set(1, .loaded(firstPage.value, fetchedAt: firstPage.fetchedAt, source: .cached(reason: nil)), current: state.history.page)
        default:
            return
        }
        if state.history.totalPages == nil { adoptTotals(firstPage.value, &state.history) }
    }

    static func historyLoaded(_ message: Message, _ state: inout AppState) -> [Effect] {
        guard case let .historyLoaded(token, page, result, at) = message else { return [] }
        if let scan = state.history.find?.scan, scan.token == token { return scanLoaded(page, result, &state) }
        if let verifying = state.verification?.historyToken, verifying == token {
            verificationHistory(result, &state)
            return []
        }
        // Only the request the page waits for counts; an evicted or superseded one is dropped.
        guard case let .loading(pending, stale) = state.history.pages[page], pending == token else { return [] }
        switch result {
        case let .success(historyPage):
            // Only the page under the cursor clears its error line (a read-ahead page is another matter).
            if page == state.history.page { recovered(CheerHistory.endpoint, &state) }
            var effects: [Effect] = []
            if state.history.totalsToken.map({ token >= $0 }) ?? true {
                state.history.totalsToken = token
                effects += totalsChanged(by: historyPage, page: page, &state)
            }
            state.history.pages.set(page, .loaded(historyPage, fetchedAt: at, source: .live), current: state.history.page)
            if page == 1 { effects.append(.writeFirstPage(key: state.context.userKey, historyPage, fetchedAt: at)) }
            if page == state.history.page { reanchor(&state.history) }
            // The history shrank below the cursor: it goes to the new last entry.
            if let count = state.history.count, state.history.cursor >= count {
                state.history.cursor = max(0, count - 1)
            }
            if state.history.dateSearch?.probe == page { effects += dateSearchStep(&state) }
            // The pages now on screen (the cursor may have moved with its entry).
            return effects + loadVisiblePages(&state)
        case let .failure(error):
            if let stale {
                // Keep showing what we had, marked with why it is not fresh.
                let reason = ErrorText.staleReason(error)
                state.history.pages.set(page, .loaded(stale.page, fetchedAt: stale.fetchedAt,
                                                      source: .cached(reason: stale.source == .live ? reason.afterRefresh : reason)), current: state.history.page)
            } else {
                state.history.pages.set(page, .failed(message: ErrorText.line(error), requestID: error.requestID), current: state.history.page)
            }
            if state.history.dateSearch?.probe == page {
                state.history.dateSearch = nil
                state.notice = Notice(.error, "Go to stopped: " + ErrorText.line(error), requestID: error.requestID)
            } else if page == state.history.page {
                state.notice = .error(error, state.context)
            }
            return []
        }
    }

    /// Takes the totals of the newest answer. When entries came in above (or went), every other page
    /// held is cut at the wrong places: they are dropped, and the cursor moves with its entry, so the
    /// list never shows an entry twice or skips one.
    static func totalsChanged(by answer: CheerHistoryPage, page: Int, _ state: inout AppState) -> [Effect] {
        let before = state.history.totalCount
        adoptTotals(answer, &state.history)
        guard let before, let after = state.history.totalCount, after != before else { return [] }
        let delta = after - before
        var effects: [Effect] = []
        for other in state.history.pages.residentPages where other != page {
            if case let .loading(token, _) = state.history.pages[other] { effects.append(.cancel(token)) }
            state.history.pages.remove(other)
        }
        // At the top the newest entries simply show; further down the cursor keeps its entry (entries
        // come in at the top: a spend). Fewer entries: the cursor's page, reloaded, finds its entry.
        if delta > 0, state.history.cursor > 0 {
            state.history.cursor += delta
            state.history.newEntries += delta
            if var find = state.history.find {
                find.matches = find.matches.map { $0 + delta }
                state.history.find = find
            }
        }
        return effects
    }

    /// After the cursor's page loads: if the entry the cursor was on is near but not under it (the
    /// counts moved it), the cursor follows it.
    static func reanchor(_ history: inout HistoryState) {
        guard let anchor = history.anchor else { return rememberAnchor(&history) }
        if let item = history.selectedItem, HistoryState.key(of: item) == anchor { return }
        let start = history.firstIndex(ofPage: history.page)
        for (offset, item) in history.rows.enumerated() where HistoryState.key(of: item) == anchor {
            history.cursor = start + offset
            return
        }
        rememberAnchor(&history)
    }

    static func historyCancelled(_ token: Token, _ state: inout AppState) {
        for page in state.history.pages.residentPages {
            guard case let .loading(pending, stale) = state.history.pages[page], pending == token else { continue }
            if let stale {
                state.history.pages.set(page, .loaded(stale.page, fetchedAt: stale.fetchedAt, source: stale.source), current: state.history.page)
            } else {
                state.history.pages.remove(page)
            }
        }
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
        let token = state.newToken()
        let evicted = state.history.pages.set(page, .loading(token: token, stale: stale), current: state.history.page)
        var effects: [Effect] = evicted.compactMap { slot in
            if case let .loading(old, _) = slot { return .cancel(old) }
            return nil
        }
        effects.append(.fetchHistory(token, user: state.context.user, page: page, perPage: state.history.perPage))
        return effects
    }

    /// Drops every resident page (the history changed) and reloads the cursor's page, which keeps
    /// showing its old rows until the new ones come. With `merge`, a request already out for that
    /// page is kept (a refresh while it loads sends nothing more); after a write it is replaced,
    /// since it was asked before the write.
    static func invalidateHistory(_ state: inout AppState, merge: Bool) -> [Effect] {
        let page = state.history.page
        let currentSlot = state.history.pages[page]
        rememberAnchor(&state.history)
        if merge, case .loading = currentSlot {
            var cancels: [Effect] = []
            for other in state.history.pages.residentPages where other != page {
                if case let .loading(token, _) = state.history.pages[other] { cancels.append(.cancel(token)) }
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
        let cancels = state.history.pages.loadingTokens.map { Effect.cancel($0) }
        state.history.pages.removeAll()
        state.history.totalsToken = nil
        return cancels + loadHistoryPage(page, &state, stale: stale)
    }

    static func adoptTotals(_ page: CheerHistoryPage, _ history: inout HistoryState) {
        history.totalPages = page.totalPages
        history.totalCount = page.totalCount
    }
}
