import Foundation
import ShopAPI
import ShopViewModels
import TerminalText

// The contract watchdog's findings on a command's own answers, as `warning:` lines (`print`, `spend`, `buy`,
// `negative`), out of the executable (issue 44, item 5).

/// `warning: GET /api/…: [check] expected …, got … (request id …)` for each finding of the exchanges `print`
/// made (the one finding's words, `ShopFinding.warningLine`); a finding seen on more than one answer is one
/// line, `(×N, first rq-…, last rq-…)` (`FindingGroup`). Answers how many distinct findings there were.
/// `lagging`: reads of this run lagged behind the writes (a `stale-read` finding, or reads read again until they settled):
/// a total that comes back across reads of page 1 may follow from it, and says so.
public func reportFindings(_ exchanges: [Exchange], lagging: Bool = false, lines: OutputLines) -> Int {
    let groups = FindingGroup.of(exchanges)
    for group in groups {
        var finding = ShopFinding(group)
        if lagging, group.finding.check == .paging, group.finding.place == .pages(.oneTotal) {
            finding.causedBy = "possibly caused by reads that lag behind the writes (stale-read)"
        }
        lines.err(finding.warningLine)
    }
    return groups.count
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
