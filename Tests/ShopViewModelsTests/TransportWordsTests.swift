import AppStoreRecord
import ShopAPI
import Testing
@testable import ShopViewModels

/// Issue 44, item 3: a failure below HTTP is worded once (`TransportError.words`): the CLI's line and the
/// Requests tab, the App Store's reads and a finding on the app's traffic say the same words (they
/// disagreed: "could not be found", "does not resolve", "no address for").
struct TransportWordsTests {
    static let errors: [TransportError] = [
        .connectionRefused(host: "127.0.0.1"), .dns(host: "no-such-host.invalid"), .tls(.hostnameMismatch), .connectTimeout(host: "h"),
        .timeout(requestID: "rq-1"), .cutShort(status: 200, requestID: "rq-2"), .cutShort(status: nil, requestID: nil), .offline,
        .responseTooLarge(limit: 64 << 20, requestID: nil), .invalidURL, .invalidHeader, .other(detail: "NIOConnectionError(errno: 111)"),
        .proxy(address: "127.0.0.1:3128", problem: .credentials),
    ]

    @Test func everyLayerSaysTheSameWords() {
        for error in Self.errors {
            #expect(ErrorText.sentenceAlone(error) == error.words)
            #expect(AppStoreFailure.transport(error).words == "the App Store could not be reached: " + error.words)
            #expect(!error.words.contains("NIO") && !error.words.contains("errno"), "no library's words: \(error.words)")
        }
        #expect(TransportError.dns(host: "no-such-host.invalid").words == "the host name no-such-host.invalid could not be found")
        #expect(TransportError.timeout(requestID: "rq-1").wordsWithHead == "timed out waiting for the server (request id rq-1)")
        #expect(TransportError.cutShort(status: 503, requestID: "rq-2").wordsWithHead
                == "the connection closed before the answer was complete (HTTP 503, request id rq-2)")
        // The CLI's line adds what to try, after the same words.
        #expect(ErrorText.parts(.connectionRefused(host: "127.0.0.1")) == ("connection refused by 127.0.0.1", " — is the server running?"))
        // A host the server or a config gave is text like any other: no escape reaches the terminal.
        #expect(!TransportError.dns(host: "evil\u{1B}[2Jhost").words.contains("\u{1B}"))
    }
}

/// `reiterate-shop keys`, out of the executable: the table and the README's Markdown come from the keymap.
struct KeymapTablesTests {
    @Test func everyBindingIsARowOfBothTables() {
        let keymap = Keymap.standard
        let text = keymap.textTable.split(separator: "\n")
        let markdown = keymap.markdownTable.split(separator: "\n")
        #expect(text.first?.hasPrefix("ACTION") == true && text.count == keymap.bindings.count + 1)
        #expect(markdown.first == "| keys | action | what it does | where |" && markdown.count == keymap.bindings.count + 2)
        for binding in keymap.bindings {
            #expect(markdown.contains { $0.contains("| `\(binding.action.rawValue)` |") }, "\(binding.action)")
        }
    }
}
