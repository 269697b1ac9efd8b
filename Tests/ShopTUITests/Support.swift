import Foundation
import HTTPTypes
import ShopAPI
import Testing
@testable import ShopTUI
@testable import ShopViewModels

let now = Date(timeIntervalSince1970: 1_795_305_600)  // 2026-11-21T21:20:00Z
let utc = TimeZone(identifier: "UTC") ?? .current

/// Whether snapshots are being recorded (`make snapshots` sets RECORD_SNAPSHOTS=1), and whether this
/// is CI (`CI` set, as every CI service sets it), where recording would pass whatever was drawn.
enum SnapshotMode {
    static func isSet(_ name: String) -> Bool {
        guard let value = ProcessInfo.processInfo.environment[name] else { return false }
        return !["", "0", "false", "no"].contains(value.lowercased())
    }
    static var recording: Bool { isSet("RECORD_SNAPSHOTS") }
    static var underCI: Bool { isSet("CI") }
}

/// Compares a grid with `__Snapshots__/NAME.txt`; RECORD_SNAPSHOTS=1 (`make snapshots`) (re)writes the
/// reference instead, never under CI (there it fails, writing nothing). A missing reference fails.
func assertSnapshot(_ grid: Grid, _ name: String, extra: String = "", filePath: String = #filePath, sourceLocation: SourceLocation = #_sourceLocation) {
    let dir = URL(fileURLWithPath: filePath).deletingLastPathComponent().appendingPathComponent("__Snapshots__")
    let file = dir.appendingPathComponent(name + ".txt")
    let actual = grid.text + "\n" + styleMap(grid) + extra
    let record = SnapshotMode.recording
    if record, SnapshotMode.underCI {
        Issue.record("RECORD_SNAPSHOTS is set under CI: snapshots are recorded on purpose with `make snapshots`, never in CI (snapshot \(name) not written)",
                     sourceLocation: sourceLocation)
        return
    }
    guard !record, let reference = try? String(contentsOf: file, encoding: .utf8) else {
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try? actual.write(to: file, atomically: true, encoding: .utf8)
        if !record { Issue.record("recorded a new snapshot \(name); check it and run again", sourceLocation: sourceLocation) }
        return
    }
    if actual != reference {
        let a = actual.split(separator: "\n", omittingEmptySubsequences: false), r = reference.split(separator: "\n", omittingEmptySubsequences: false)
        let firstDiff = zip(a, r).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(a.count, r.count)
        Issue.record("""
            snapshot \(name) differs at line \(firstDiff + 1):
              expected: \(firstDiff < r.count ? String(r[firstDiff]) : "<end>")
              actual:   \(firstDiff < a.count ? String(a[firstDiff]) : "<end>")
            (`make snapshots` to accept)
            """, sourceLocation: sourceLocation)
    }
}

/// The grid's styles as a second picture under the text: one letter per cell (`.` plain), with a
/// legend, so a lost highlight or colour fails a snapshot like lost text does.
func styleMap(_ grid: Grid) -> String {
    var letters: [Style: Character] = [.plain: "."]
    var legend: [String] = []
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
    var rows: [String] = []
    for y in 0..<grid.height {
        var row = ""
        for x in 0..<grid.width {
            let style = grid[x, y].style
            if letters[style] == nil {
                let letter = alphabet[min(letters.count - 1, alphabet.count - 1)]
                letters[style] = letter
                legend.append("\(letter) \(describe(style))")
            }
            row.append(letters[style] ?? "?")
        }
        while row.last == "." { row.removeLast() }
        rows.append(row)
    }
    return "--- styles: " + (legend.isEmpty ? "all plain" : legend.joined(separator: "; ")) + "\n" + rows.joined(separator: "\n") + "\n"
}

func describe(_ s: Style) -> String {
    var parts: [String] = []
    if let fg = s.foreground { parts.append("fg \(fg)") }
    if let bg = s.background { parts.append("bg \(bg)") }
    if s.bold { parts.append("bold") }
    if s.reverse { parts.append("reverse") }
    if s.dim { parts.append("dim") }
    if s.underline { parts.append("underline") }
    return parts.isEmpty ? "plain" : parts.joined(separator: " ")
}

func pack(_ id: String, _ name: String, _ creator: String, price: Int, cheer: Int, tags: [String], description: String) -> AudioPack {
    AudioPack(identifier: "com.reiterate.pack." + id, name: name, creator: creator, description: description, priceCents: price,
              currency: "USD", sampleCount: 48, durationSeconds: 2520, cheerTotal: cheer,
              released: Date(timeIntervalSince1970: 1_710_465_917), tags: tags)
}

let fixturePacks: [AudioPack] = [
    pack("rain", "Rain on a Tin Roof", "Field & Foley", price: 199, cheer: 13_669, tags: ["rain", "sleep"], description: "Steady rain on corrugated metal, close and wide. 48 samples by Field & Foley."),
    pack("cafe-flore", "Café de Flore Mornings", "Amélie Durand", price: 0, cheer: 29_009, tags: ["café", "focus"], description: "Espresso machines, saucers and soft French chatter à 8 h."),
    pack("tokyo-night", "東京 Night Walk", "佐藤 健二", price: 499, cheer: 870, tags: ["city"], description: "渋谷 crossings, vending machines and distant trains after midnight."),
    pack("ocean-drift", "Ocean Drift 🌊", "Tidewater Audio", price: 999, cheer: 4_225, tags: ["ocean"], description: "Slow swells on a pebble beach 🌊, recorded at dawn."),
    pack("bangkok-market", "Bangkok Evening Market ตลาด", "สมชาย วงศ์สกุล", price: 299, cheer: 18_173, tags: ["city"], description: "ตลาดนัด woks, tuk-tuks and bargaining at dusk."),
    pack("mech-keyboard", "Mechanical Keyboard ASMR ⌨️", "Clicky Labs", price: 99, cheer: 26_090, tags: ["asmr"], description: "Tactile switches, lubed and unlubed ⌨️."),
]

func historyFixture() -> CheerHistoryPage {
    let comments = [
        CheerComment(signature: "tomás", body: "I have been listening to this pack every single night for the past three months, and the loop points are genuinely invisible."),
        CheerComment(signature: nil, body: "ありがとう！毎晩聴いています。"),
        CheerComment(signature: "민수", body: nil),
    ]
    var items: [HistoryItem] = [
        .entry(CheerHistoryEntry(id: "h-230", creator: "Field & Foley", amount: 20, product: "com.reiterate.pack.rain", date: now.addingTimeInterval(-3_600), comments: comments)),
        .entry(CheerHistoryEntry(id: "h-229", creator: "佐藤 健二", amount: 500, product: "com.reiterate.pack.tokyo-night", date: now.addingTimeInterval(-90_000), comments: nil)),
        .unreadable(UnreadableEntry(index: 2, id: "h-228", reason: "creator: expected text")),
        .entry(CheerHistoryEntry(id: "h-227", creator: "Amélie Durand", amount: 25, product: "com.reiterate.pack.cafe-flore", date: now.addingTimeInterval(-200_000), comments: [])),
    ]
    for i in 0..<20 {
        items.append(.entry(CheerHistoryEntry(id: "h-\(226 - i)", creator: "Tidewater Audio", amount: 5 * (i + 1), product: "com.reiterate.pack.ocean-drift",
                                              date: now.addingTimeInterval(Double(-300_000 - i * 86_400)), comments: [CheerComment(signature: "zoë", body: "🔥")])))
    }
    return CheerHistoryPage(items: items, page: 1, perPage: 50, totalPages: 2_000, totalCount: 100_000)
}

func exchangeFixture(_ id: Int, path: String, status: Int?, failure: ExchangeFailure? = nil, body: String? = nil) -> Exchange {
    Exchange(id: id, method: path.hasPrefix("/api/v1/spend") ? "POST" : "GET", path: path, startedAt: now.addingTimeInterval(Double(-id)),
             duration: .milliseconds(12 * id), status: status, failure: failure, requestID: status == nil ? nil : "rq-\(String(repeating: "a", count: 4))\(id)",
             attempt: 1, requestBytes: 0, responseBytes: body?.utf8.count ?? 0,
             requestHeaders: [.accept: "application/json", .authorization: "<redacted>"],
             responseHeaders: status == nil ? [:] : [.contentType: "application/json", .requestID: "rq-aaaa\(id)"],
             requestBodyPreview: nil, responseBodyPreview: body)
}

/// A fully loaded app: balance, packs, history page 3 of the whale, some requests.
func loadedState(environment: String = "staging", readOnly: Bool = false) -> AppState {
    var s = AppState(context: ShopContext(environment: environment, baseURL: "https://staging.reiterate.invalid", user: "qa-alice", readOnly: readOnly))
    _ = ShopUpdate.update(&s, .start)
    if let token = s.token(for: .balance) { _ = ShopUpdate.update(&s, .replied(token, .success(.balance(CheerBalance(balance: 1250))), at: now)) }
    if let token = s.token(for: .packs) { _ = ShopUpdate.update(&s, .replied(token, .success(.packs(AudioPackList(packs: fixturePacks))), at: now)) }
    if let token = s.token(for: .historyPage(1)) { _ = ShopUpdate.update(&s, .replied(token, .success(.history(historyFixture())), at: now)) }
    for (i, path) in ["/api/v1/audio_packs", "/api/v1/cheer_history?user_id=qa-alice&page=1&per_page=50", "/api/v1/balance?user_id=qa-alice"].enumerated() {
        let body = path.contains("balance") ? #"{"balance":1250}"# : #"{"packs":[{"identifier":"com.reiterate.pack.rain","name":"Rain on a Tin Roof","tags":["rain","sleep"]}]}"#
        _ = ShopUpdate.update(&s, .exchangeRecorded(exchangeFixture(i + 1, path: path, status: 200, body: body)))
    }
    _ = ShopUpdate.update(&s, .exchangeRecorded(exchangeFixture(4, path: "/api/v1/balance?user_id=qa-alice", status: nil, failure: .transport(.connectionRefused(host: "127.0.0.1")))))
    s.notice = nil
    return s
}

func frame(_ app: AppState, keymap: Keymap = .standard, width: Int = 80, height: Int = 24) -> Frame {
    var app = app
    app.screen.width = width
    app.screen.height = height
    return Frame(app: app, keymap: keymap, now: now, timeZone: utc)
}

extension Message {
    /// A shop request's reply as the store sends it, answered at `at` (the token's purpose routes it).
    static func replied(_ token: Token, _ result: Result<ShopAnswer, ShopAPIError>, requestID: String? = nil, at: Date) -> Message {
        .answered(token, ShopReply(.balance(user: "qa-alice"), result, requestID: requestID, sentAt: at))
    }
}

/// The note the proxy's `lose_answer` fault leaves on an exchange (the view models know no proxy).
extension FaultNote {
    static let loseAnswer = FaultNote(name: "lose_answer", reachedServer: true, appGotAnswer: false,
                                      effect: "the server's answer was read and recorded, and the app's connection closed without it")
}
