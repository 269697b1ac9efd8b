import Foundation
import JSONTokens

/// What a server said in an error body, whether or not the body follows the contract's `Error`
/// schema (`{"message", "code"}`): the watchdog flags a body that does not, and its words are still
/// shown. Raw text, cut to `limit` characters: the display layer sanitizes it (`ErrorText`).
public struct ServerWords: Sendable, Equatable {
    /// The sentence: `message`, else `error`, else `detail` (a string, or an object holding one of
    /// them, as `{"error": {"message": …}}`); else the start of a text body.
    public var text: String?
    /// `code` (a string or a number), at the top or inside `error`.
    public var code: String?

    /// The most characters kept of either: an error line stays one line.
    public static let limit = 200

    public init(text: String? = nil, code: String? = nil) {
        self.text = text
        self.code = code
    }

    public var isEmpty: Bool { text == nil && code == nil }

    /// The words of an error body. A JSON body gives its keys; a body that is not JSON gives its start
    /// when it is text (an HTML page its `<title>`: its markup says nothing); binary gives nothing.
    public static func read(_ body: [UInt8], contentType: String?) -> ServerWords {
        guard !body.isEmpty else { return ServerWords() }
        if let value = JSONValue.parse(body) {
            return json(value)
        }
        var text = String(decoding: body.prefix(4096), as: UTF8.self)
        guard !text.contains("\u{0}") else { return ServerWords() }  // binary
        if text.last == "\u{FFFD}" { text.removeLast() }  // a character cut at the 4 KiB
        let start = text.drop { $0.isWhitespace }.prefix(16).lowercased()
        if contentType?.lowercased().contains("html") ?? false || start.hasPrefix("<!doctype html") || start.hasPrefix("<html") {
            return ServerWords(text: title(text).map(bounded))
        }
        let words = bounded(text)
        return ServerWords(text: words.isEmpty ? nil : words)
    }

    static func json(_ value: JSONValue) -> ServerWords {
        switch value {
        case let .string(s):
            return ServerWords(text: nonEmpty(s).map(bounded))
        case let .object(object):
            var words = ServerWords(code: scalar(object["code"]).map(bounded))
            for key in ["message", "error", "detail"] {
                switch object[key] {
                case let .string(s)? where nonEmpty(s) != nil:
                    words.text = bounded(s)
                case let .object(inner)?:
                    let nested = json(.object(inner))
                    words.text = nested.text
                    if words.code == nil { words.code = nested.code }
                default:
                    continue
                }
                if words.text != nil { break }
            }
            return words
        default:
            return ServerWords()
        }
    }

    /// A string or a number as text (`"no_user"`, `404`).
    static func scalar(_ value: JSONValue?) -> String? {
        switch value {
        case let .string(s)?: return nonEmpty(s)
        case let .int(n)?: return String(n)
        case let .double(d)?: return String(d)
        default: return nil
        }
    }

    static func nonEmpty(_ s: String) -> String? {
        s.allSatisfy(\.isWhitespace) ? nil : s
    }

    /// One line of at most `limit` characters: white space (newlines too) folded, `…` where cut.
    static func bounded(_ s: String) -> String {
        let folded = s.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
        return folded.count > limit ? String(folded.prefix(limit - 1)) + "…" : folded
    }

    /// The text of an HTML page's `<title>`.
    static func title(_ html: String) -> String? {
        guard let open = html.range(of: "<title", options: .caseInsensitive),
              let end = html[open.upperBound...].range(of: ">"),
              let close = html[end.upperBound...].range(of: "</title", options: .caseInsensitive) else { return nil }
        return nonEmpty(String(html[end.upperBound..<close.lowerBound]))
    }
}
