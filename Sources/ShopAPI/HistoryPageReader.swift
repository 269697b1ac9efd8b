import Foundation
import JSONTokens

/// Reads a cheer history page straight from the tokens the client already made of the answer (one
/// pass over its bytes, no tree, no `Decoder` machinery): the hot path of `print history --all` and
/// of `/` find, where each entry used to cost most of its time in `JSONDecoder`.
///
/// It takes only what it reads exactly as `JSONDecoder` would: well-formed JSON, every entry whole,
/// every field of the type the contract gives. Anything else — an unreadable entry, a number that is
/// not a plain integer, a raw control character or bad UTF-8 in a string, a key given twice, our own
/// cache's marks — answers nil, and the caller decodes the page with `JSONDecoder`, which words the
/// problem. A test holds the two to the same result on generated, hostile and fuzzed pages.
enum HistoryPageReader {
    static func read(_ body: [UInt8], tokens: [JSONToken]) -> CheerHistoryPage? {
        body.withUnsafeBufferPointer { bytes in
            var reader = Reader(c: JSONCursor(bytes: bytes, tokens: tokens))
            return reader.page()
        }
    }

    static let pageKeys: [[UInt8]] = ["history", "page", "per_page", "total_pages", "total_count"].map { Array($0.utf8) }
    static let entryKeys: [[UInt8]] = ["id", "creator", "amount", "product", "date", "comments", "unreadable"].map { Array($0.utf8) }
    static let commentKeys: [[UInt8]] = ["signature", "body"].map { Array($0.utf8) }

    private struct Reader {
        var c: JSONCursor

        /// The next token, moved past.
        mutating func take() -> JSONToken? {
            guard let t = c.current else { return nil }
            c.index += 1
            return t
        }

        mutating func take(_ kind: JSONToken.Kind) -> Bool {
            guard c.current?.kind == kind else { return false }
            c.index += 1
            return true
        }

        /// Walks an object's members: `member` is handed each key (its value is next) and answers
        /// whether it read the value; false ends the walk as unreadable.
        mutating func object(_ member: (inout Reader, JSONToken) -> Bool) -> Bool {
            guard take(.beginObject) else { return false }
            if take(.endObject) { return true }
            while true {
                guard let key = take(), key.kind == .string, !key.unterminated, JSONString.isValid(c.bytes, key), clean(key), take(.colon) else { return false }
                guard member(&self, key) else { return false }
                if take(.comma) { continue }
                return take(.endObject)
            }
        }

        mutating func array(_ element: (inout Reader) -> Bool) -> Bool {
            guard take(.beginArray) else { return false }
            if take(.endArray) { return true }
            while true {
                guard element(&self) else { return false }
                if take(.comma) { continue }
                return take(.endArray)
            }
        }

        /// Moves past a value no field takes, holding it to what `JSONDecoder` reads.
        mutating func skip(depth: Int = 1) -> Bool {
            guard depth < 256, let t = c.current else { return false }
            switch t.kind {
            case .beginObject: return object { r, _ in r.skip(depth: depth + 1) }
            case .beginArray: return array { $0.skip(depth: depth + 1) }
            case .string:
                guard !t.unterminated, JSONString.isValid(c.bytes, t), clean(t) else { return false }
            case .number:
                guard JSONNumber.shape(c.bytes, t) != nil else { return false }
            case .literalTrue, .literalFalse, .literalNull: break
            case .endObject, .endArray, .colon, .comma, .invalid: return false
            }
            c.index += 1
            return true
        }

        mutating func null() -> Bool { take(.literalNull) }

        /// A string as `JSONDecoder` reads it; nil for anything it would refuse or read otherwise.
        mutating func string() -> String? {
            guard let t = c.current, t.kind == .string, !t.unterminated, JSONString.isValid(c.bytes, t), clean(t) else { return nil }
            c.index += 1
            return JSONString.decode(c.bytes, t)
        }

        /// No raw control character, and valid UTF-8 (Foundation refuses the whole document otherwise).
        /// An escaped lone surrogate reads as U+FFFD both here and after `JSONRepair`.
        func clean(_ t: JSONToken) -> Bool {
            var ascii = true
            for i in t.contentRange {
                let b = c.bytes[i]
                if b < 0x20 { return false }
                if b >= 0x80 { ascii = false }
            }
            if ascii { return true }
            return String(validating: UnsafeBufferPointer(rebasing: c.bytes[t.contentRange]), as: UTF8.self) != nil
        }

        mutating func int() -> Int? {
            guard let t = c.current, let n = c.int(t) else { return nil }
            c.index += 1
            return n
        }

        /// `null`, or absent: nil; a value of another type: unreadable.
        mutating func optional<T>(_ read: (inout Reader) -> T?) -> T?? {
            if null() { return .some(nil) }
            guard let value = read(&self) else { return nil }
            return .some(value)
        }

        mutating func page() -> CheerHistoryPage? {
            var items: [HistoryItem]?
            var paging: [Int?] = [nil, nil, nil, nil]
            var seen: Set<Int> = []
            let names = HistoryPageReader.pageKeys
            let whole = object { r, key in
                guard let field = names.firstIndex(where: { r.c.string(key, equals: $0) }) else { return r.skip() }
                guard seen.insert(field).inserted else { return false }  // given twice: the decoder says which wins
                if field == 0 {
                    var rows: [HistoryItem] = []
                    guard r.array({ r in
                        guard let entry = r.entry() else { return false }
                        rows.append(.entry(entry))
                        return true
                    }) else { return false }
                    items = rows
                    return true
                }
                guard let value = r.optional({ $0.int() }) else { return false }
                paging[field - 1] = value
                return true
            }
            guard whole, c.index == c.tokens.count, let items else { return nil }
            if let page = paging[0], let perPage = paging[1], let totalPages = paging[2], let totalCount = paging[3] {
                return CheerHistoryPage(items: items, page: page, perPage: perPage, totalPages: totalPages, totalCount: totalCount)
            }
            // A server without paging: everything on one page (as `CheerHistoryPage.init(from:)`).
            return CheerHistoryPage(items: items, page: 1, perPage: max(items.count, 1), totalPages: items.isEmpty ? 0 : 1, totalCount: items.count)
        }

        mutating func entry() -> CheerHistoryEntry? {
            var id: String??
            var creator: String?, product: String?, amount: Int?, date: Date?
            var comments: [CheerComment]??
            var seen: Set<Int> = []
            let names = HistoryPageReader.entryKeys
            let whole = object { r, key in
                guard let field = names.firstIndex(where: { r.c.string(key, equals: $0) }) else { return r.skip() }
                guard seen.insert(field).inserted else { return false }
                switch field {
                case 0:
                    id = r.optional { $0.string() }
                    return id != nil
                case 1:
                    creator = r.string()
                    return creator != nil
                case 2:
                    amount = r.int()
                    return amount != nil
                case 3:
                    product = r.string()
                    return product != nil
                case 4:
                    guard let text = r.string() else { return false }
                    date = ISO8601.parse(text)
                    return date != nil
                case 5:
                    comments = r.optional { r in
                        var list: [CheerComment] = []
                        guard r.array({ r in
                            guard let comment = r.comment() else { return false }
                            list.append(comment)
                            return true
                        }) else { return nil }
                        return list
                    }
                    return comments != nil
                default:
                    return false  // our own cache's mark: the decoder reads it
                }
            }
            guard whole, let creator, let amount, let product, let date else { return nil }
            return CheerHistoryEntry(id: id ?? nil, creator: creator, amount: amount, product: product, date: date, comments: comments ?? nil)
        }

        mutating func comment() -> CheerComment? {
            var signature: String??, body: String??
            var seen: Set<Int> = []
            let names = HistoryPageReader.commentKeys
            let whole = object { r, key in
                guard let field = names.firstIndex(where: { r.c.string(key, equals: $0) }) else { return r.skip() }
                guard seen.insert(field).inserted else { return false }
                let value = r.optional { $0.string() }
                if field == 0 { signature = value } else { body = value }
                return value != nil
            }
            guard whole else { return nil }
            return CheerComment(signature: signature ?? nil, body: body ?? nil)
        }
    }
}
