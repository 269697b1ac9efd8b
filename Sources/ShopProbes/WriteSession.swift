import Foundation
import ShopAPI
import ShopCache
import ShopViewModels
import TerminalText

/// What `spend` and `buy` do once their settings are made, out of the executable: the write through the view
/// models (the same update and verification as the TUI's), then its report: the write's verdict and checks on
/// stdout, its findings (and the others, apart) as `warning:` lines.
public struct WriteSession: Sendable {
    public var verb: String
    /// `--strict`: the write's findings set the status; `--strict=all`: any finding does.
    public var strict: Bool
    public var strictAll: Bool
    /// `--unchecked`: the client's own input checks are off for this write.
    public var unchecked: Bool
    /// A line after the verdict and its checks (`buy`: the transaction id it made).
    public var footer: String?
    public var kind: @Sendable (AppState) -> ShopWrite

    public init(verb: String, strict: Bool, strictAll: Bool, unchecked: Bool, footer: String?, kind: @escaping @Sendable (AppState) -> ShopWrite) {
        self.verb = verb
        self.strict = strict
        self.strictAll = strictAll
        self.unchecked = unchecked
        self.footer = footer
        self.kind = kind
    }

    /// Why nothing was written: a usage refusal (what the shop must refuse, not sent) or the state not read.
    public struct Stop: Error, Sendable {
        public var words: String
        public var usage: Bool
    }

    /// The write's one outcome, the error its answer was, and how many findings count for `--strict`.
    public struct Done: Sendable {
        public var outcome: WriteOutcome
        public var error: ShopAPIError?
        public var findings: Int
    }

    public func run(client: ShopClient, cache: CacheStore, context: ShopContext, lines: OutputLines) async throws -> Done {
        let store = await AppStore(state: AppState(context: context), service: LiveShopService(client: client), cache: cache)
        // The start's reads; what the checks compare against is read again and settled right before
        // the write by the view models (`readBaseline`: the same rule as the TUI's dialog), against the
        // timeline this machine's earlier writes left in the cache.
        await store.send(.start)
        await store.settle()
        let before = await store.state
        guard before.balance.source == .live, before.balance.value != nil else {
            _ = reportFindings(await client.exchangesWithPinsSettled(), lines: lines)
            if let error = before.balance.error { throw error }
            throw Stop(words: "the balance could not be read before the \(verb)", usage: false)
        }
        let write = kind(before)
        // The client's own input checks: what the shop must refuse is not sent, unless --unchecked.
        let refusals = before.expectedRefusals(write)
        if !refusals.isEmpty, !unchecked {
            throw Stop(words: "the shop must refuse this \(verb): \(refusals.map(\.reason).joined(separator: "; ")); nothing was sent"
                           + " (add --unchecked to send it as typed)", usage: true)
        }
        await store.send(.write(write))
        await store.settle()
        let after = await store.state
        let exchanges = await client.exchangesWithPinsSettled()
        // A write the shop must refuse, taken: that finding leads stderr as it leads stdout.
        let lead = after.write.outcome?.acceptedRefusable
        if let lead { lines.err(lead.warningLine) }
        // The findings about the write first (they set --strict's status), then the others.
        let scope = WriteScope(kind: write, packs: after.packs.list.value ?? before.packs.list.value)
        let (own, others) = scope.split(exchanges)
        // What the reads after the write showed of their own (a stale read): the server's, told once, first,
        // since a total that came back across the reads follows from it.
        let readFindings = after.write.outcome?.readFindings ?? []
        for record in readFindings { lines.err(record.warningLine) }
        var findings = reportFindings(own, lagging: !readFindings.isEmpty, lines: lines)
        if strict { findings += readFindings.count }
        if others.contains(where: { !$0.findings.isEmpty }) {
            lines.err("note: findings about other reads (not the \(verb)'s: \(strictAll ? "they count under --strict=all" : "--strict leaves them out")):\n")
            let more = reportFindings(others, lagging: !readFindings.isEmpty, lines: lines)
            if strictAll { findings += more }
        }
        // The write's one outcome: its words, its checks, and whether it was applied.
        guard let outcome = after.write.outcome else {
            // Never sent (refused before it left): the notice says why.
            if let notice = after.notice { lines.out(Sanitizer.line(notice.text) + "\n") }
            if let error = after.write.lastError { throw error }
            throw Stop(words: "the \(verb) was not sent", usage: false)
        }
        // A ✗ line names the request it is about (the write's request id), as every warning does.
        func about(_ requestID: String?) -> String { requestID.map { " (request id \(Sanitizer.line($0)))" } ?? "" }
        let verdict = Sanitizer.line(outcome.text)
        let failedID = outcome.failed.first?.requestID ?? outcome.requestID
        lines.out(verdict + (outcome.failed.isEmpty || verdict.contains("request id") ? "" : about(failedID)) + "\n")
        for check in outcome.checks {
            lines.out("  " + Sanitizer.line(check.outcome == .passed ? "✔ \(check.name): \(check.actual)" : check.line)
                         + (check.outcome == .failed ? about(check.requestID) : "") + "\n")
            if check.outcome == .failed, check != lead { lines.err(check.warningLine) }
        }
        if let footer { lines.out(footer + "\n") }
        // What the reads settled on is what the cache keeps, whatever a later read of the screen's said:
        // the next run's baseline is held against it.
        if let settled = outcome.settledBalance {
            SessionJournal.active?.settled(user: context.user, balance: settled, base: context.baseURL)
            _ = await cache.write(CheerBalance(balance: settled), kind: .balance, key: context.userKey, fetchedAt: Date())
        }
        if let page = outcome.settledFirstPage {
            _ = await cache.write(page, kind: .historyFirstPage, key: context.userKey, fetchedAt: Date())
        }
        return Done(outcome: outcome, error: after.write.lastError, findings: findings)
    }
}
