import Foundation
import TerminalText

/// A request as curl, on its way to the clipboard (`c`): the command (its token already left out:
/// `$REITERATE_TOKEN`, never the value) and the request it sends again.
public struct CurlCopy: Equatable, Sendable {
    public var command: String
    public var requestID: String?

    public init(command: String, requestID: String?) {
        self.command = command
        self.requestID = requestID
    }

    /// `312 characters`.
    var size: String { "\(Wording.grouped(command.count)) character\(command.count == 1 ? "" : "s")" }
}

/// Where a copy reached, as the front end found out: the notice says so, and where none is known to
/// have been reached the text is also written to a file.
public enum ClipboardReach: Equatable, Sendable {
    /// tmux's paste buffer took it (`tmux load-buffer -`, inside tmux); OSC 52 was sent too.
    case tmuxBuffer
    /// OSC 52, to a terminal known to take it.
    case terminal
    /// OSC 52 was sent, but nothing says the terminal takes it, and there is no tmux to ask.
    case unconfirmed
}

extension ShopUpdate {
    /// The front end put the curl line where it could. Where no clipboard is known to have taken it,
    /// it goes to a file too (the notice names the file when it is written).
    static func curlCopied(_ copy: CurlCopy, _ reach: ClipboardReach, _ state: inout AppState) -> [Effect] {
        switch reach {
        case .tmuxBuffer:
            state.notice = Notice(.info, "copied as curl (\(copy.size)) to tmux's paste buffer (and by OSC 52)", requestID: copy.requestID)
            return []
        case .terminal:
            state.notice = Notice(.info, "copied as curl (\(copy.size)) to the clipboard (OSC 52)", requestID: copy.requestID)
            return []
        case .unconfirmed:
            state.notice = Notice(.info, "writing the curl line (\(copy.size)) to a file: no clipboard is known to take it here…", requestID: copy.requestID)
            return [.saveCurl(copy)]
        }
    }

    /// The curl line's file was written, or not.
    static func curlSaved(_ copy: CurlCopy, _ result: Result<String, EvidenceError>, _ state: inout AppState) -> [Effect] {
        switch result {
        case let .success(path):
            // Short, so that the file's name fits the line (OSC 52 was sent too; the docs say so).
            state.notice = Notice(.info, "curl line (\(copy.size)) written to \(Sanitizer.line(path))", requestID: copy.requestID)
        case let .failure(error):
            state.notice = Notice(.error, "The curl line was sent by OSC 52 only (this terminal may ignore it): \(error.message)", requestID: copy.requestID)
        }
        return []
    }
}
