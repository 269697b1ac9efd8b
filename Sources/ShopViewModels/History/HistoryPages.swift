import Foundation
import ShopAPI
import ShopCache

/// The history's pages: loading them (coalesced, bounded), their answers, totals that change under the
/// list, and the cached first page.
extension ShopUpdate {
    // MARK: pages

    /// The cached first page: shown at once, replaced by the live answer.
    static func cachedFirstPage(_ firstPage: CacheEntry<CheerHistoryPage>, _ state: inout AppState) {
        var slot = state.history.pages[1] ?? .idle
        guard slot.shown == nil else { return }
        slot.cached(firstPage.value, at: firstPage.fetchedAt)
        state.history.pages.set(1, slot, current: state.history.page)
        if state.history.totalPages == nil { adoptTotals(firstPage.value, &state.history) }
    }

    /// A history page's answer (the table has already told it from a stale one).
    static func pageLoaded(_ page: Int, _ token: Token, _ result: Result<CheerHistoryPage, ShopAPIError>, at: Date,
                           _ state: inout AppState) -> [Effect] {
        guard var slot = state.history.pages[page] else { return [] }
        switch result {
        case let .success(historyPage):
            // Only the page under the cursor clears its error line (a read-ahead page is another matter).
            if page == state.history.page { recovered(CheerHistory.endpoint, &state) }
            var effects: [Effect] = []
            let countBefore = state.history.count
            let stepBefore = state.history.stepText
            var reset = false
            // A page answered long after the reading began tells of another moment: a fresh reading (the
            // history grows meanwhile; pages 85 s apart that differ by the new entries do not "disagree").
            if let started = state.history.reading.startedAt, at.timeIntervalSince(started) > PageReading.span {
                if let told = state.history.reading.disagreement, state.notice?.text == told.line { state.notice = nil }
                state.history.reading.beginAgain(at: at)
            } else if state.history.reading.startedAt == nil {
                state.history.reading.startedAt = at
            }
            // Not a staleness rule: of two answers, the later-asked one's totals are the newer.
            if state.history.totalsToken.map({ token >= $0 }) ?? true {
                state.history.totalsToken = token
                if let changed = totalsChanged(by: historyPage, page: page, &state) {
                    effects += changed.effects
                    reset = changed.reset
                }
            }
            let lastPage = state.history.totalPages
            noteReceived(historyPage, page: page, perPage: state.history.perPage, &state.history)
            if let lastPage, page > lastPage, !historyPage.items.isEmpty { pastLastPage(historyPage, page: page, lastPage: lastPage, &state) }
            slot.succeeded(historyPage, at: at)
            state.history.pages.set(page, slot, current: state.history.page)
            if !reset { effects += overlapFound(historyPage, page: page, &state) }
            // `G` found the list longer than the server said: the cursor goes on to the new end, once.
            if state.history.reading.followEnd, let before = countBefore, let after = state.history.count, after > before,
               state.history.cursor == before - 1 {
                state.history.reading.followEnd = false
                effects += moveCursor(to: after - 1, &state)
            }
            if page == 1 { effects.append(.writeFirstPage(key: state.context.userKey, historyPage, fetchedAt: at)) }
            if page == state.history.page { reanchor(&state.history) }
            // The history shrank below the cursor: it goes to the new last entry.
            if let count = state.history.count, state.history.cursor >= count {
                state.history.cursor = max(0, count - 1)
            }
            if state.history.dateSearch?.probe == page { effects += dateSearchStep(&state) }
            // The report's step says what the position line says now (the count came with this page).
            if state.history.stepText != stepBefore { state.steps.revise("went to \(state.history.stepText)", ifLast: .historyMove) }
            // The pages now on screen (the cursor may have moved with its entry).
            return effects + loadVisiblePages(&state)
        case let .failure(error):
            // Keep showing what we had, marked with why it is not fresh.
            let reason = ErrorText.staleReason(error)
            slot.failed(error, reason: slot.source == .live ? reason.afterRefresh : reason)
            state.history.pages.set(page, slot, current: state.history.page)
            if state.history.dateSearch?.probe == page {
                state.history.dateSearch = nil
                state.notice = Notice(.error, "Go to stopped: ", failure: ErrorText.words(error))
            } else if page == state.history.page {
                state.notice = .error(error, state.context)
            }
            return []
        }
    }

    /// Takes the totals of the newest answer. When entries came in above (or went), every other page
    /// held is cut at the wrong places: they are dropped, and the cursor moves with its entry, so the
    /// list never shows an entry twice or skips one.
    /// Answers nil when the totals did not change; `reset` when the list took the new totals (the first
    /// change of a reading), not when it had read again once already and stopped (`totalsDisagree`).
    static func totalsChanged(by answer: CheerHistoryPage, page: Int, _ state: inout AppState) -> (effects: [Effect], reset: Bool)? {
        let said = PageSaid(page: page, total: answer.totalCount, requestID: answer.requestID)
        guard let before = state.history.totalCount, answer.totalCount != before else {
            adoptTotals(answer, &state.history)
            state.history.reading.said[page] = said
            return nil
        }
        guard totalsDisagree(answer, page: page, before: before, &state) else { return ([], false) }
        adoptTotals(answer, &state.history)
        // The other pages go: what was received is counted again from what stays.
        state.history.reading.received = 0
        let after = answer.totalCount
        let delta = after.minusSaturating(before)
        var effects: [Effect] = []
        for other in state.history.pages.residentPages where other != page {
            effects += cancel(.historyPage(other), &state)
            state.history.pages.remove(other)
        }
        // At the top the newest entries simply show; further down the cursor keeps its entry (entries
        // come in at the top: a spend). Fewer entries: the cursor's page, reloaded, finds its entry.
        if delta > 0, state.history.cursor > 0 {
            state.history.cursor = state.history.cursor.plusSaturating(delta)
            state.history.newEntries = state.history.newEntries.plusSaturating(delta)
            if var find = state.history.find {
                find.matches = find.matches.map { $0.plusSaturating(delta) }
                find.keys = Dictionary(find.keys.map { ($0.key.plusSaturating(delta), $0.value) }, uniquingKeysWith: { a, _ in a })
                state.history.find = find
            }
            state.history.reading.shifted = delta
        }
        return (effects, true)
    }

    /// After the cursor's page loads: if the entry the cursor was on is near but not under it (the
    /// counts moved it), the cursor follows it.
    static func reanchor(_ history: inout HistoryState) {
        guard let anchor = history.anchor else { return rememberAnchor(&history) }
        if let item = history.selectedItem, HistoryState.key(of: item) == anchor { return }
        // The cursor's page first, then its neighbours as far as they are here (pages that overlap or
        // lag by an entry put it across the edge).
        for page in [history.page, history.page - 1, history.page + 1] where page >= 1 {
            let start = history.firstIndex(ofPage: page)
            for (offset, item) in HistoryState.items(of: history.pages[page]).enumerated() where HistoryState.key(of: item) == anchor {
                history.cursor = start + offset
                return
            }
        }
        rememberAnchor(&history)
    }

    /// A page's request will not answer: it shows what it had, or leaves the cache.
    static func pageWithdrawn(_ page: Int, _ state: inout AppState) {
        guard var slot = state.history.pages[page], slot.isLoading else { return }
        slot.withdrawn()
        if slot.shown == nil {
            state.history.pages.remove(page)
        } else {
            state.history.pages.set(page, slot, current: state.history.page)
        }
    }

    /// Fetches `page` unless it is resident (or in flight: coalesced). `force` refetches a loaded or
    /// failed page; `stale` is shown meanwhile.
    static func loadHistoryPage(_ page: Int, _ state: inout AppState, force: Bool = false, stale: Known<CheerHistoryPage>? = nil) -> [Effect] {
        var slot = state.history.pages[page] ?? .idle
        switch slot {
        case .loading:
            state.history.pages.touch(page)
            return []
        case let .loaded(known) where !force && known.source == .live:
            state.history.pages.touch(page)
            return []
        case .failed(_, nil) where !force:
            state.history.pages.touch(page)
            return []
        default:
            // A page shown from the cache, or kept after a failed refresh, is fetched live (showing
            // its rows meanwhile).
            break
        }
        if let stale, slot.shown == nil { slot = .loaded(stale) }
        let token = state.newToken()
        slot.asked(token)
        let orphaned = state.history.pages.set(page, slot, current: state.history.page)
        return orphaned.map { .cancel($0) } + [.request(token, .history(user: state.context.user, page: page, perPage: state.history.perPage))]
    }

    /// Drops every resident page (the history changed) and reloads the cursor's page, which keeps
    /// showing its old rows until the new ones come. With `merge`, a request already out for that
    /// page is kept (a refresh while it loads sends nothing more); after a write it is replaced,
    /// since it was asked before the write.
    static func invalidateHistory(_ state: inout AppState, merge: Bool) -> [Effect] {
        let page = state.history.page
        let currentSlot = state.history.pages[page]
        rememberAnchor(&state.history)
        if merge, currentSlot?.isLoading == true {
            if let told = state.history.reading.disagreement, state.notice?.text == told.line { state.notice = nil }
            state.history.reading = PageReading()
            var cancels: [Effect] = []
            for other in state.history.pages.residentPages where other != page {
                cancels += cancel(.historyPage(other), &state)
                state.history.pages.remove(other)
            }
            return cancels
        }
        let stale = currentSlot?.shown
        // A fresh reading: the line about pages that disagreed in the last one goes with it.
        if let told = state.history.reading.disagreement, state.notice?.text == told.line { state.notice = nil }
        let cancels = cancelRequests(&state) { if case .historyPage = $0 { return true } else { return false } }
        state.history.pages.removeAll()
        state.history.totalsToken = nil
        state.history.reading = PageReading()
        return cancels + loadHistoryPage(page, &state, stale: stale)
    }

    static func adoptTotals(_ page: CheerHistoryPage, _ history: inout HistoryState) {
        history.totalPages = page.totalPages
        history.totalCount = page.totalCount
    }
}
