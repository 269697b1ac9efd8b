import Foundation
import ShopAPI
import ShopViewModels
import TerminalText

// The contract watchdog's findings on a command's own answers, as `warning:` lines (`print`, `spend`, `buy`,
// `negative`), out of the executable (issue 44, item 5).

/// `warning: [check] expected …, got … (request id …)` for each finding of the exchanges `print`
/// made; a finding seen on more than one answer is one line, `(×N, first rq-…, last rq-…)`
/// (`FindingGroup`). Answers how many distinct findings there were.
/// `lagging`: reads of this run lagged behind the writes (a `stale-read` finding, or reads read again until they settled):
/// a total that comes back across reads of page 1 may follow from it, and says so.
public func reportFindings(_ exchanges: [Exchange], lagging: Bool = false, lines: OutputLines) -> Int {
    let groups = FindingGroup.of(exchanges)
    for group in groups {
        let follows = lagging && group.finding.check == .paging && group.finding.place == .pages(.oneTotal)
        lines.err(warningLine(group) + (follows ? " — possibly caused by reads that lag behind the writes (stale-read)" : "") + "\n")
    }
    return groups.count
}

/// One finding (or one recurring finding) as a `warning:` line, sanitized.
public func warningLine(_ group: FindingGroup) -> String {
    // A finding about one entry is grouped by the user's history; its line names the page it was last seen on.
    let target = group.finding.entry != nil && !group.lastTarget.isEmpty ? group.lastTarget : group.key.target
    var line = "warning: \(group.key.method) \(Sanitizer.line(target)): \(Sanitizer.line(group.finding.line))"
    if group.count > 1 {
        line += " (×\(group.count)"
        if group.firstRequestID != nil || group.lastRequestID != nil {
            let first = group.firstRequestID.map(Sanitizer.line) ?? "no request id"
            let last = group.lastRequestID.map(Sanitizer.line) ?? "no request id"
            line += ", first \(first), last \(last)"
        }
        if let firstActual = group.firstActual { line += "; first got \(Sanitizer.line(firstActual))" }
        line += ")"
    } else if let id = group.lastRequestID {
        line += " (request id \(Sanitizer.line(id)))"
    }
    return line
}

extension ShopClient {
    /// The session's exchanges, once each pinned read whose answer differed from its pin has been read
    /// again until it settles (`PinStore.confirm`: two more reads at most), so a `pinned` warning rests
    /// on two answers that agree, never on one.
    public func exchangesWithPinsSettled() async -> [Exchange] {
        if let pins = pipeline.pins {
            let service = LiveShopService(client: self)
            await pins.confirm { key in
                guard let request = ShopRequest(reading: key) else { return }
                _ = try? await service.send(request)
            }
        }
        return await exchanges.all()
    }
}

extension CheckRecord {
    /// `warning: POST /api/v1/spend_cheer: [spend-balance] expected 1,243, got 1,242 (request id rq-…)`.
    public var warningLine: String { finding.warningLine }
}
