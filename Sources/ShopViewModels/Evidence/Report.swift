import Foundation
import JSONTokens
import ShopAPI
import ShopCache
import TerminalText

extension ShopUpdate {
    /// `R`: a bug report on the write of the dialog shown (its result, a refusal, a lost answer, or
    /// still out), the selected request (Requests tab), the selected check (Checks tab: a write's
    /// verification is a report on that write), or the latest error. Drafted here; the store writes
    /// it (with the screen) and answers its path.
    static func draftReport(_ state: inout AppState) -> [Effect] {
        if let report = writeReport(state) { return [.writeReport(report)] }
        var title: String
        var exchange: Exchange?
        var checks: [CheckRecord] = []
        switch state.screen.tab {
        case .requests:
            guard let e = state.requests.selected else { return nothingToReport(&state) }
            exchange = e
            if let failure = e.failure {
                title = "\(e.method) \(e.path): \(ErrorText.sentence(failure))"
            } else if let status = e.status, status >= 400 {
                let words = e.responseBodyPreview.map { ServerWords.read(Array($0.utf8), contentType: e.responseHeaders[.contentType]) }
                title = "\(e.method) \(e.path) → HTTP \(status) \(ErrorText.reasonPhrase(status))" + (words?.text.map { ": \($0)" } ?? "")
            } else if let finding = e.findings.first {
                title = "\(e.method) \(e.path): \(finding.line)"
            } else if e.isPending {
                title = "\(e.method) \(e.path): no answer yet after \(Int(e.duration.components.seconds)) s"
            } else {
                title = "\(e.method) \(e.path) → \(e.status.map { "HTTP \($0) \(ErrorText.reasonPhrase($0))" } ?? "no answer")"
            }
        case .checks:
            guard let record = state.checks.list.selected else { return nothingToReport(&state) }
            title = "\(record.request): " + record.stated
            checks = [record]
            exchange = exchangeInQuestion(state)
        case .live where state.watch.timeline.selected.map(pairedReportable) == true:
            return pairedReport(state).map { [.writeReport($0)] } ?? nothingToReport(&state)
        case .purchases:
            return purchaseReport(state).map { [.writeReport($0)] } ?? nothingToReport(&state)
        default:
            guard let error = state.notice?.kind == .error ? state.notice : state.lastError else { return nothingToReport(&state) }
            title = error.text
            exchange = Self.exchange(behind: error, in: state.exchanges)
        }
        if let id = exchange?.requestID {
            for c in state.checks.records where c.requestID == id && !checks.contains(c) { checks.append(c) }
        }
        let curl = exchange.map { CurlCommand.make($0, baseURL: state.context.baseURL, tokenVariable: state.context.tokenVariable) }
        return [.writeReport(BugReport(title: title, context: state.context, steps: state.steps.steps, exchange: exchange, curl: curl,
                                       checks: checks, width: state.screen.width, height: state.screen.height))]
    }

    private static func nothingToReport(_ state: inout AppState) -> [Effect] {
        state.notice = Notice(.info, "Nothing to report: select a request (3) or a check (4), or press R on an error.")
        return []
    }

    /// The file the store wrote (or could not write) for `R` or `e`.
    static func evidenceWritten(_ what: EvidenceKind, _ result: Result<String, EvidenceError>, _ state: inout AppState) -> [Effect] {
        switch result {
        case let .success(path):
            switch what {
            case .report: state.notice = Notice(.info, "bug report written (path copied): \(path)")
            case let .har(count):
                state.notice = Notice(.info, "HAR of \(Wording.grouped(count)) request\(count == 1 ? "" : "s") written (path copied): \(path)")
            }
            return [.copy(path)]
        case let .failure(error):
            state.notice = Notice(.error, error.message)
            return []
        }
    }
}

/// What `R` and `e` write.
public enum EvidenceKind: Equatable, Sendable {
    case report
    /// A HAR file of `count` requests.
    case har(count: Int)
}

/// Why a report or HAR file could not be written: one plain line.
public struct EvidenceError: Error, Equatable, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
}

/// A read a write's checks depend on, as a bug report lists it: the last of its kind before the
/// write (what the checks compared against) or the first after it (the verification's).
public struct ReportRead: Equatable, Sendable {
    public enum When: Equatable, Sendable { case before, after }
    public var when: When
    /// `GET /api/v1/audio_packs`: what was read (whether or not a read was found).
    public var what: String
    public var exchange: Exchange?
    /// What the check reads of its answer: `balance 1,250`, `com.reiterate.pack.rain: cheer_total 980`.
    public var fact: String?

    /// `- before the write: GET /api/v1/balance?user_id=qa-alice → 200, request id rq-1, at …: balance 1,250`.
    var markdown: String {
        let side = when == .before ? "before the write" : "after the write"
        guard let e = exchange else { return "- \(side): \(BugReport.code(what)): no read was recorded" }
        var line = "- \(side): \(BugReport.code("\(e.method) \(e.path)"))"
        if let status = e.status { line += " → \(status)" } else if let failure = e.failure { line += " → \(BugReport.text(ErrorText.sentence(failure)))" }
        line += ", request id " + (e.requestID.map(BugReport.code) ?? "none")
        line += ", \(BugReport.utc(e.startedAt))"
        if let fact { line += ": \(BugReport.text(fact))" }
        return line
    }
}

extension ShopUpdate {
    /// The write a report is on: the write of the dialog shown, or of the write's check selected on
    /// the Checks tab. Its verdict and checks, and the reads they depend on, before and after.
    static func writeReport(_ state: AppState) -> BugReport? {
        let rows = state.exchanges
        var title: String
        var write: Exchange?
        var checks: [CheckRecord] = []
        var missing: String?
        if state.dialogShown, let action = state.write.action {
            switch action.phase {
            case .editing, .confirming: return nil
            case let .pending(_, summary, _):
                title = summary.isEmpty ? "a write still waiting for its answer" : summary
            case .succeeded, .failed:
                title = state.write.shownOutcome?.text ?? ""
                // The outcome the dialog says, when its verification has come (else still reading).
                checks = state.write.outcome?.checks ?? []
            }
            // The write's own exchange. None when it failed before it was sent, or the log has
            // dropped it: then the report says so, and attaches no other write.
            write = state.lastWriteExchange
            missing = "No exchange of this write was recorded: it failed before it was sent, or it is no longer among the last "
                + "\(RequestsState.capacity) requests. No other write is attached."
        } else if state.screen.tab == .checks, let record = state.checks.list.selected, !record.isFinding {
            guard let id = record.requestID, let e = rows.first(where: { $0.requestID == id && $0.operation.map(AppState.writeOperations.contains) == true }) else { return nil }
            write = e
            title = "\(record.request): " + record.stated
            checks = [record] + state.checks.records.filter { $0.requestID == id && !$0.isFinding && $0 != record }
        } else {
            return nil
        }
        // Its findings too (the watchdog's on the write's answer).
        if let id = write?.requestID {
            for c in state.checks.records where c.requestID == id && !checks.contains(c) { checks.append(c) }
        }
        let curl = write.map { CurlCommand.make($0, baseURL: state.context.baseURL, tokenVariable: state.context.tokenVariable) }
        var report = BugReport(title: title, context: state.context, steps: state.steps.steps, exchange: write, curl: curl,
                               checks: checks, width: state.screen.width, height: state.screen.height)
        report.exchangeHeading = "The write"
        if let missing { report.missingExchange = missing }
        if let write { report.reads = reads(around: write, in: rows, user: state.context.user) }
        return report
    }

    /// The reads a write's checks depend on: the balance (every write), and for a spend the history's
    /// first page and the pack list. Each the last answered before the write was sent and the first
    /// sent after it (`rows` newest first).
    static func reads(around write: Exchange, in rows: [Exchange], user: String) -> [ReportRead] {
        // The write as its body says it (the one decoder of a write's body).
        let product = write.requestBodyPreview.flatMap { ShopWrite(operation: write.operation, body: Array($0.utf8)) }?.spend?.product
        var kinds: [(OperationID, String)] = [(Balance.endpoint.operation, Balance.endpoint.description)]
        if write.operation == SpendCheer.endpoint.operation {
            kinds += [(CheerHistory.endpoint.operation, CheerHistory.endpoint.description), (AudioPacks.endpoint.operation, AudioPacks.endpoint.description)]
        }
        func relevant(_ e: Exchange, _ operation: OperationID) -> Bool {
            guard e.operation == operation, !e.isPending else { return false }
            if operation == AudioPacks.endpoint.operation { return true }
            if e.key?.value("user_id").map({ $0 == user }) == false { return false }
            return operation != CheerHistory.endpoint.operation || (e.key?.value("page") ?? "1") == "1"
        }
        var out: [ReportRead] = []
        for (operation, what) in kinds {
            let before = rows.first { relevant($0, operation) && $0.id < write.id }
            let after = rows.last { relevant($0, operation) && $0.id > write.id }
            out.append(ReportRead(when: .before, what: what, exchange: before, fact: before.flatMap { fact($0, product: product) }))
            out.append(ReportRead(when: .after, what: what, exchange: after, fact: after.flatMap { fact($0, product: product) }))
        }
        return out
    }

    /// What a check reads of an answer: the balance, the history's total and newest entry, the pack's total.
    static func fact(_ e: Exchange, product: String?) -> String? {
        guard let status = e.status, (200..<300).contains(status) else { return nil }
        guard let preview = e.responseBodyPreview, case let .object(o)? = JSONValue.parse(Array(preview.utf8)) else {
            return "(the answer is longer than the log keeps: see the HAR file, `e`)"
        }
        switch e.operation {
        case Balance.endpoint.operation?:
            // Read by the operation's endpoint type (the response itself is in the report, whatever it holds).
            return OperationID.getBalance.answeredBalance(Array(preview.utf8)).map { "balance \(Wording.grouped($0))" }
                ?? (o.members.contains { $0.key == "balance" } ? "a balance that is not an integer (see the response)" : nil)
        case CheerHistory.endpoint.operation?:
            var text = o["total_count"].map { "total_count \(number($0))" } ?? "no total_count"
            if case let .array(items)? = o["history"], case let .object(newest)? = items.first {
                let amount = newest["amount"].map(number) ?? "?"
                let what: String
                if case let .string(p)? = newest["product"] { what = p } else { what = "?" }
                let id: String
                if case let .string(s)? = newest["id"] { id = " (id \(s))" } else { id = "" }
                text += "; newest entry: \(amount) on \(what)\(id)"
            }
            return text
        case AudioPacks.endpoint.operation?:
            guard let product else { return nil }
            guard case let .array(packs)? = o["packs"],
                  let pack = packs.first(where: { if case let .object(p) = $0, case .string(product)? = p["identifier"] { return true } else { return false } }),
                  case let .object(p) = pack else { return "\(product): not in the list" }
            return "\(product): cheer_total \(p["cheer_total"].map(number) ?? "none")"
        default:
            return nil
        }
    }

    private static func number(_ value: JSONValue) -> String {
        switch value {
        case let .int(n): return Wording.grouped(n)
        case let .double(d): return String(d)
        case let .string(s): return "“\(s)”"
        default: return value.describe
        }
    }
}
