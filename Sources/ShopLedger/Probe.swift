import Foundation

/// What `--probe` got for one App Store transaction posted once more, with the App Store's product id.
public enum ProbeResult: Sendable, Equatable {
    /// 200: it had not been credited; the probe credited it now.
    case credited(requestID: String?)
    /// 409: credited before.
    case alreadyCredited(requestID: String?)
    /// Another status: refused (or failed).
    case refused(status: Int, code: String?, requestID: String?)
    /// No answer: whether the probe was applied is not known (read the balance; it is never sent again).
    case unanswered

    public var requestID: String? {
        switch self {
        case let .credited(id), let .alreadyCredited(id), let .refused(_, _, id): id
        case .unanswered: nil
        }
    }
}

extension Ledger {
    /// The ledger after `--probe`: each probed transaction's line settled by what the backend answered.
    /// `refunded`: the ids the App Store says were refunded or revoked (a post of one must be refused).
    public func probed(_ results: [String: ProbeResult], refunded: Set<String> = []) -> Ledger {
        var copy = self
        for i in copy.lines.indices {
            let line = copy.lines[i]
            guard line.verdict != .notVerified, line.verdict != .notPaid, let result = results[line.transactionID] else { continue }
            var l = line
            if let id = result.requestID { l.requestIDs.append(id) }
            if refunded.contains(line.transactionID) {
                copy.lines[i] = Self.probedRefund(l, result)
                continue
            }
            switch result {
            case .credited where [.credited, .creditMismatch, .creditedTwice].contains(line.verdict):
                // Credited before (the exchanges show it), and credited again: a replayed transaction.
                l.verdict = .creditedTwice
                l.blame = .server
                l.words = "credited before, and the probe's repeat was credited again (200, not 409)"
                l.isFinding = true
            case .credited:
                // Paid, and the backend had not credited it: whatever the exchanges showed, this is now known.
                l.verdict = .notCredited
                l.blame = line.verdict == .notCredited ? line.blame : .unknown
                l.words = "paid, never credited; credited now by the probe" + (line.verdict == .notCredited || line.verdict == .notSeen ? " (before: \(line.words))" : "")
                l.isFinding = true
            case .alreadyCredited:
                if line.verdict == .notCredited || line.verdict == .notSeen {
                    // The backend has it: by a post the HAR files given do not hold.
                    l.verdict = .credited
                    l.blame = nil
                    l.isFinding = false
                    l.words = "credited before, by a post not in the HAR files given (the probe's repeat answered 409); the amount credited was not seen"
                    l.amountUnjudged = true
                } else {
                    l.words += "; the probe's repeat answered 409"
                }
            case let .refused(status, code, _):
                let answer = "\(status)" + (code.map { " \($0)" } ?? "")
                if line.verdict == .notCredited || line.verdict == .notSeen {
                    l.verdict = .notCredited
                    l.words += "; the probe's post was refused too (\(answer)): the backend refuses a real App Store purchase"
                    l.blame = .server
                    l.isFinding = true
                } else {
                    l.words += "; the probe's repeat answered \(answer), not 409"
                }
            case .unanswered:
                l.words += "; the probe's answer was lost: whether it credited is not known (read the balance)"
            }
            copy.lines[i] = l
        }
        return copy
    }

    /// A refunded transaction posted once more: the backend must refuse it. A 200 is a finding (the
    /// server's); a 409 says it was credited before (whether the cheer was taken back is the refund's
    /// judgement); any other refusal is as it must be.
    static func probedRefund(_ line: LedgerLine, _ result: ProbeResult) -> LedgerLine {
        var l = line
        switch result {
        case .credited:
            l.words += "; the probe's post of this refunded transaction was credited (200): a refunded transaction must be refused"
            l.blame = .server
            l.isFinding = true
        case .alreadyCredited:
            l.words += "; the probe's post answered 409 (credited before)"
        case let .refused(status, code, _):
            l.words += "; the probe's post was refused (\(status)\(code.map { " \($0)" } ?? "")), as a refunded transaction must be"
        case .unanswered:
            l.words += "; the probe's answer was lost: whether it credited is not known (read the balance)"
        }
        return l
    }
}
