import Foundation
import JSONTokens
import ShopAPI

extension ShopUpdate {
    /// Whether `R` on this Live event writes a paired report: it names an app request, or is a finding.
    static func pairedReportable(_ e: WatchEvent) -> Bool {
        if case .finding = e.change { return true }
        if case .appWrite = e.change { return true }
        return e.causes.contains { if case .app = $0 { return true } else { return false } }
    }

    /// `R` on a Live event the watch paired with the app's write: the app's request and the server's
    /// answer (with the fault, if the proxy put one in), the watch's reads before and after it, and the
    /// verdict with its blame.
    static func pairedReport(_ state: AppState) -> BugReport? {
        guard let event = state.watch.timeline.selected else { return nil }
        var names: [String: String] = [:]
        for pack in state.packs.all where names[pack.identifier] == nil { names[pack.identifier] = pack.name }
        let ids = Set(event.requestIDs + event.causes.compactMap { if case let .app(id) = $0 { return id } else { return nil } })
        let rows = state.exchanges
        // The app's write: the first of the event's request ids that is an app POST.
        let write = rows.first { e in e.source == .app && e.operation.map(AppState.writeOperations.contains) == true && e.requestID.map(ids.contains) == true }
        var verdict: String?
        var checks: [CheckRecord] = []
        if case let .finding(check, _, _) = event.change {
            let whose = " — \(check.blame.words)"  // the watch's rule says whose fault, as every output of the finding does
            verdict = "[\(check.rawValue)]\(whose): \(event.text(names: names))"
            checks = state.checks.records.filter { $0.check == .watch(check) && $0.at == event.at }
        } else {
            verdict = event.text(names: names)
        }
        if let id = write?.requestID {
            for c in state.checks.records where c.requestID == id && !checks.contains(c) { checks.append(c) }
        }
        let curl = write.map { CurlCommand.make($0, baseURL: state.context.baseURL, tokenVariable: state.context.tokenVariable) }
        var report = BugReport(title: "Live: " + event.text(names: names), context: state.context, steps: state.steps.steps, exchange: write, curl: curl,
                               checks: checks, width: state.screen.width, height: state.screen.height)
        report.verdict = verdict
        report.exchangeHeading = "The app's request and the server's answer"
        report.missingExchange = "No app request is behind this event, or it is no longer among the last \(RequestsState.capacity) requests."
        // The watch's reads around it: the event's own reads, before and after the app's write.
        let reads = rows.filter { $0.source == .tool && $0.key?.method == .get && $0.requestID.map(ids.contains) == true }
        let pivot = write?.startedAt ?? event.at
        report.reads = reads.sorted { $0.startedAt < $1.startedAt }.map { e in
            ReportRead(when: e.startedAt < pivot ? .before : .after, what: "\(e.method) \(e.path)", exchange: e, fact: readFact(e))
        }
        return report
    }

    /// What the watch read in a read's answer, in a few words.
    static func readFact(_ e: Exchange) -> String? {
        guard let body = e.responseBodyPreview else { return nil }
        if let n = e.operation?.answeredBalance(Array(body.utf8)) { return "balance \(Wording.grouped(n))" }
        if e.operation == .getCheerHistory { return "the newest entries (see the response)" }
        return nil
    }
}
