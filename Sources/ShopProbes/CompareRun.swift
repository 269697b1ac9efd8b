import Foundation
import ShopAPI
import ShopCompare
import ShopViewModels
import TerminalText

/// `compare`'s run, out of the executable (issue 44, item 5): both sides read a pair at a time and compared as
/// they come; a failure says which side it came from. The TUI's compare view runs the same.
public enum CompareRun {
    public struct Outcome: Sendable {
        public var differences: [Difference]
        public var requestIDs: (a: [String], b: [String])
        public var a: SideDescription
        public var b: SideDescription
        public var pastTheEdge = 0
    }

    /// A side that holds none of what is compared (`A (snap.json) holds no balance`).
    public struct Missing: Error, Sendable {
        public var words: String
    }

    /// The reads of both sides, each pair at once, compared as they come.
    public static func compare(_ sideA: any SideReader, _ sideB: any SideReader, parts: Set<ComparedPart>, historyPages: Int, ignore: IgnoreRules) async throws -> Outcome {
        let a = Tagged(side: .a, inner: sideA), b = Tagged(side: .b, inner: sideB)
        var comparison = Comparison(ignore: ignore, dates: { ISO8601.parse($0) })
        func both(_ what: String, _ x: RecordedRead?, _ y: RecordedRead?) throws -> (RecordedRead, RecordedRead) {
            guard let x else { throw Missing(words: "A (\(a.description.name)) holds no \(what)") }
            guard let y else { throw Missing(words: "B (\(b.description.name)) holds no \(what)") }
            return (x, y)
        }
        if parts.contains(.balance) {
            async let x = a.balance()
            async let y = b.balance()
            let (ra, rb) = try both("balance", try await x, try await y)
            comparison.balance(ra, rb)
        }
        if parts.contains(.packs) {
            async let x = a.packs()
            async let y = b.packs()
            let (ra, rb) = try both("pack list", try await x, try await y)
            comparison.packs(ra, rb)
        }
        if parts.contains(.history) {
            var page = 1
            while page <= historyPages {
                let n = page
                // Each side's page whole, in as many reads as its server needs (pages need not come in step).
                async let x = a.historyReads(page: n, perPage: CheerHistory.maxPerPage)
                async let y = b.historyReads(page: n, perPage: CheerHistory.maxPerPage)
                let (ra, rb) = (try await x, try await y)
                if ra == nil, rb == nil { break }
                if page == 1 { _ = try both("history", ra?.first, rb?.first) }
                comparison.history(a: ra?.first, b: rb?.first)
                for more in (ra ?? []).dropFirst() { comparison.history(a: more, b: nil) }
                for more in (rb ?? []).dropFirst() { comparison.history(a: nil, b: more) }
                page += 1
            }
        }
        let differences = comparison.finish()
        return Outcome(differences: differences, requestIDs: comparison.requestIDs, a: a.description, b: b.description, pastTheEdge: comparison.pastTheEdge)
    }

    /// Which side a failure came from, for its one line.
    public enum Side: String, Sendable {
        case a = "A", b = "B"

        func tag<T>(_ value: () async throws -> T) async throws -> T {
            do {
                return try await value()
            } catch let error as ShopAPIError {
                throw SideFailure(side: self, error: error)
            }
        }
    }

    /// A side whose failures say which side they came from.
    struct Tagged: SideReader {
        let side: Side
        let inner: any SideReader
        var description: SideDescription { inner.description }
        func balance() async throws -> RecordedRead? { try await side.tag { try await inner.balance() } }
        func packs() async throws -> RecordedRead? { try await side.tag { try await inner.packs() } }
        func history(page: Int, perPage: Int) async throws -> RecordedRead? { try await side.tag { try await inner.history(page: page, perPage: perPage) } }
        func historyReads(page: Int, perPage: Int) async throws -> [RecordedRead]? {
            try await side.tag { try await inner.historyReads(page: page, perPage: perPage) }
        }
    }

    public struct SideFailure: Error, Sendable {
        public var side: Side
        public var error: ShopAPIError
    }

    /// Why a comparison could not be made, in plain words.
    public static func reason(_ error: any Error) -> String {
        switch error {
        case let failure as SideFailure: return "side \(failure.side.rawValue): " + ErrorText.line(failure.error)
        case let failure as ShopAPIError: return ErrorText.line(failure)
        case let failure as Missing: return Sanitizer.line(failure.words)
        default: return "an unexpected internal failure"
        }
    }
}
