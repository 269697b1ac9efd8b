import Foundation
import Testing
@testable import ShopTUI
@testable import ShopViewModels

/// The palettes, `auto`'s question to the terminal, and the answers that must not become keys.
@Suite struct ThemeTests {
    // MARK: Palettes

    /// xterm's 256-colour table: 0–15 as xterm draws them, the 6×6×6 cube, the grey ramp.
    static func rgb(_ index: Int16) -> (Double, Double, Double) {
        let basic: [(Double, Double, Double)] = [(0, 0, 0), (205, 0, 0), (0, 205, 0), (205, 205, 0), (0, 0, 238), (205, 0, 205), (0, 205, 205), (229, 229, 229),
                                                 (127, 127, 127), (255, 0, 0), (0, 255, 0), (255, 255, 0), (92, 92, 255), (255, 0, 255), (0, 255, 255), (255, 255, 255)]
        let n = Int(index)
        if n < 16 { return basic[n] }
        if n < 232 {
            let levels: [Double] = [0, 95, 135, 175, 215, 255]
            return (levels[(n - 16) / 36], levels[(n - 16) / 6 % 6], levels[(n - 16) % 6])
        }
        let v = Double(8 + 10 * (n - 232))
        return (v, v, v)
    }

    static func linear(_ c: Double) -> Double { let c = c / 255; return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4) }

    static func contrast(_ index: Int16, on background: Theme.Background) -> Double {
        let (r, g, b) = rgb(index)
        let l = TerminalBackground.luminance(r / 255, g / 255, b / 255)
        return background == .light ? 1.05 / (l + 0.05) : (l + 0.05) / 0.05
    }

    /// Every ink with a fixed colour (the cube and the greys; 0–15 are the terminal's own, tuned to
    /// its background) keeps WCAG AA's 4.5:1 against its palette's background.
    @Test func everyFixedInkIsReadableOnItsBackground() {
        for theme in Theme.all {
            for color in Color.allCases where theme.ink(color).index256 >= 16 {
                let ratio = Self.contrast(theme.ink(color).index256, on: theme.background)
                #expect(ratio >= 4.5, "\(theme) \(color): \(ratio):1")
            }
        }
        // The light palette replaces every basic colour: yellow (3) on white is 1.5:1.
        #expect(Color.allCases.allSatisfy { Theme.light.ink($0).index256 >= 16 })
        #expect(Self.contrast(3, on: .light) < 2)
    }

    /// Colour-vision deficiencies simulated (Machado, Oliveira and Fernandes 2009, severity 1, on
    /// linear RGB), then compared in CIELAB: in the colour-blind-safe palettes good, warning and
    /// danger stay at least ΔE 20 apart for deuteranopia, protanopia and tritanopia alike. The
    /// ordinary light palette's warning and danger merge for deuteranopia (which is why it exists).
    @Test func colourBlindSafePalettesKeepGoodWarningAndDangerApart() {
        let matrices: [String: [[Double]]] = [
            "deuteranopia": [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]],
            "protanopia": [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]],
            "tritanopia": [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.303900]],
            "typical": [[1, 0, 0], [0, 1, 0], [0, 0, 1]],
        ]
        func lab(_ index: Int16, _ m: [[Double]]) -> [Double] {
            let (r0, g0, b0) = Self.rgb(index)
            let v = [Self.linear(r0), Self.linear(g0), Self.linear(b0)]
            let s = m.map { row in min(1, max(0, zip(row, v).map(*).reduce(0, +))) }
            let r: Double = s[0], g: Double = s[1], b: Double = s[2]
            let x: Double = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
            let y: Double = 0.2126 * r + 0.7152 * g + 0.0722 * b
            let z: Double = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883
            func f(_ t: Double) -> Double { t > 0.008856 ? cbrt(t) : 7.787 * t + 16 / 116 }
            return [116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))]
        }
        func worst(_ theme: Theme) -> (Double, String) {
            var result = (Double.infinity, "")
            for (vision, m) in matrices {
                let colors: [Color] = [.good, .warning, .danger]
                for (i, a) in colors.enumerated() {
                    for b in colors[(i + 1)...] {
                        let d = zip(lab(theme.ink(a).index256, m), lab(theme.ink(b).index256, m)).map { ($0 - $1) * ($0 - $1) }.reduce(0, +).squareRoot()
                        if d < result.0 { result = (d, "\(vision): \(a) against \(b)") }
                    }
                }
            }
            return result
        }
        for theme in Theme.all where theme.colorBlindSafe {
            let (distance, pair) = worst(theme)
            #expect(distance >= 20, "\(theme): ΔE \(distance) for \(pair)")
        }
        #expect(worst(.light).0 < 5, "the measure tells the ordinary palette from the safe one")
    }

    @Test func lookFollowsThePaletteAndMonochromeKeepsEmphasis() {
        #expect(Theme.light.look(.muted, colors: 256) == Theme.Look(ink: Theme.Ink(index256: 241, index8: nil), dim: false))
        #expect(Theme.light.look(.muted, colors: 8).dim, "8 colours have no grey: muted stays dim")
        #expect(Theme.dark.look(.error, colors: 256).ink?.index256 == 1)
        #expect(Theme.monochrome(.error) == Theme.Look(ink: nil, bold: true))
        #expect(Theme.monochrome(Style(foreground: .warning)).bold && !Theme.monochrome(Style(foreground: .good)).bold)
        #expect(Set(Theme.all.map(\.description)) == ["dark", "light", "dark-colorblind", "light-colorblind"])
    }

    /// The palettes on screens that use every meaningful colour: the text and style letters as in the
    /// other snapshots, then each letter's look in each palette, with 256 and with 8 colours.
    @Test func snapshotsInEveryPalette() {
        var l = Loop()
        l.app.checks.add([
            CheckRecord(check: .write(.spendBalance), outcome: .failed, expected: "1,243 (1,250 − 7)", actual: "1,242", request: "POST /api/v1/spend_cheer", requestID: "rq-7f3a", at: now),
            CheckRecord(check: .write(.spendHistory), outcome: .passed, expected: "newest 7", actual: "newest 7", request: "POST /api/v1/spend_cheer", requestID: "rq-7f3a", at: now),
        ])
        l.press(.char("4"))
        assertThemedSnapshot(Renderer.render(frame(l.app, width: 100, height: 30)), "themes-checks-100x30")
        l.press(.char("1"))
        assertThemedSnapshot(Renderer.render(frame(l.app, width: 100, height: 30)), "themes-shop-100x30")
    }

    // MARK: The dialogs' notes carry a glyph, not only a colour

    @Test func aRefusedValueAndAKeptIdHaveTheirGlyphs() {
        var l = Loop()
        l.press(.char("s"))
        l.type("x")
        l.press(.enter)
        let refused = Renderer.render(frame(l.app)).text
        #expect(refused.contains("✖ The amount is a whole number"))
        let production = ShopContext(environment: "preview", baseURL: "https://p.invalid", user: "qa-alice")
        #expect(Renderer.badge(production).0 == " ⚠ PREVIEW ", "an environment of unknown risk says so without the red")
    }

    // MARK: auto: the terminal's answer

    @Test func osc11AnswersAreJudgedByLuminance() {
        let esc = "\u{1B}"
        func parse(_ s: String) -> Theme.Background? { TerminalBackground.parse(Array(s.utf8)) }
        #expect(parse("\(esc)]11;rgb:ffff/ffff/ffff\(esc)\\") == .light)
        #expect(parse("\(esc)]11;rgb:0000/0000/0000\u{07}") == .dark)
        #expect(parse("\(esc)]11;rgb:fd/f6/e3\u{07}\(esc)[?1;2c") == .light, "Solarized light, two digits a channel")
        #expect(parse("\(esc)]11;rgb:00/2b/36\(esc)\\") == .dark, "Solarized dark")
        #expect(parse("\(esc)]11;rgb:8/8/8\u{07}") == .dark, "mid grey (one digit a channel) is dark by luminance")
        #expect(parse("\(esc)[?1;2c") == nil, "device attributes alone: the terminal did not tell")
        #expect(parse("\(esc)]11;rgb:ffff/ffff\u{07}") == nil)
        #expect(parse("\(esc)]11;rgb:fffff/0/0\u{07}") == nil)
        #expect(parse("\(esc)]11;rgb:zz/00/00\u{07}") == nil)
        #expect(TerminalBackground.fromColorFGBG("15;0") == .dark)
        #expect(TerminalBackground.fromColorFGBG("0;default;15") == .light)
        #expect(TerminalBackground.fromColorFGBG("0;7") == .light)
        #expect(TerminalBackground.fromColorFGBG("7;8") == .dark)
        #expect(TerminalBackground.fromColorFGBG("default") == nil && TerminalBackground.fromColorFGBG(nil) == nil)
    }

    /// Armed (the probe gave up), the filter drops the terminal's answers whole — also one cut across
    /// two reads — and keeps the keys around them; the device-attributes answer, the last one,
    /// disarms it, as does time. Disarmed it drops nothing: Escape [ ? c typed by a user are keys.
    @Test func lateTerminalAnswersNeverBecomeKeys() {
        func keys(_ s: String) -> [RawKey] { s.unicodeScalars.map { RawKey(kind: 1, code: Int32($0.value)) } }
        let t0 = ContinuousClock.now
        var off = LateReplyFilter()
        #expect(off.filter(keys("\u{1B}[?1;2c"), now: t0) == keys("\u{1B}[?1;2c"), "not armed: every key is the user's")

        var f = LateReplyFilter()
        f.arm(for: .seconds(2), now: t0)
        #expect(f.filter(keys("j\u{1B}]11;rgb:ffff/ffff/ffff\u{1B}\\k"), now: t0) == keys("jk"))
        #expect(f.filter(keys("q\u{1B}]11;rgb:ff"), now: t0) == keys("q"), "the start of a cut answer is held")
        #expect(f.filter(keys("ff/0/0\u{07}\u{1B}"), now: t0) == keys("\u{1B}"), "its rest dropped; a lone Escape is a key")
        #expect(f.isArmed)
        #expect(f.filter(keys("\u{1B}[?64;1;2cr"), now: t0) == keys("r") && !f.isArmed, "the last answer disarms it")
        #expect(f.filter(keys("\u{1B}[?1c"), now: t0) == keys("\u{1B}[?1c"))

        var late = LateReplyFilter()
        late.arm(for: .seconds(2), now: t0)
        #expect(late.filter(keys("\u{1B}]11;rgb:0/0"), now: t0).isEmpty)
        #expect(late.filter(keys("x"), now: t0 + .seconds(3)) == keys("\u{1B}]11;rgb:0/0x") && !late.isArmed, "after its time it holds nothing back")

        var fn = LateReplyFilter()
        fn.arm(now: t0)
        let withFunctionKey = [RawKey(kind: 1, code: 0x1B), RawKey(kind: 1, code: Int32(UInt8(ascii: "]"))), RawKey(kind: 2, code: 0o402), RawKey(kind: 1, code: 7)]
        #expect(fn.filter(withFunctionKey, now: t0) == withFunctionKey, "a function key inside is no answer")
    }

    /// The probe against a real pseudo-terminal: it sends OSC 11 and a device-attributes request,
    /// reads the answer, stops at the device attributes without waiting out its timeout, gives back
    /// keys typed meanwhile, and puts the terminal's modes back.
    @Test(arguments: [
        ("\u{1B}]11;rgb:ffff/ffff/ffff\u{1B}\\\u{1B}[?1;2c", Theme.Background?.some(.light), ""),
        ("\u{1B}]11;rgb:1c1c/1c1c/1c1c\u{07}\u{1B}[?62;22c", .some(.dark), ""),
        ("\u{1B}[?1;2c", nil, ""),
        ("q\u{1B}]11;rgb:ffff/ffff/ffff\u{07}\u{1B}[?1;2cj", .some(.light), "qj"),
    ])
    func theProbeAsksARealTerminal(answer: String, expected: Theme.Background?, typed: String) async throws {
        let (master, slave) = try #require(PseudoTerminal.open())
        var before = termios()
        tcgetattr(slave, &before)

        // The probe blocks in poll: on a thread of its own, not the tests' cooperative pool.
        let probe = ProbeThread { TerminalBackground.ask(input: slave, output: slave, timeout: .seconds(30)) }
        // Read what the probe sent, as a terminal would, then answer.
        var sent: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64)
        while !String(decoding: sent, as: UTF8.self).hasSuffix("\u{1B}[c") {
            var p = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 5_000) > 0 else { break }
            let n = buffer.withUnsafeMutableBytes { read(master, $0.baseAddress, $0.count) }
            guard n > 0 else { break }
            sent += buffer[0..<n]
        }
        // Answered whatever was read, so the probe ends before its descriptors are closed.
        _ = Array(answer.utf8).withUnsafeBufferPointer { write(master, $0.baseAddress, $0.count) }
        let result = await probe.result()
        var after = termios()
        tcgetattr(slave, &after)
        close(master)
        close(slave)
        #expect(String(decoding: sent, as: UTF8.self) == "\u{1B}]11;?\u{1B}\\\u{1B}[c")
        #expect(result?.background == expected && result?.complete == true)
        #expect(result.map { String(decoding: $0.typed, as: UTF8.self) } == typed)
        // Timed on the probe's own thread (the tests' pool can be slow to come back under load).
        #expect(probe.duration < .seconds(25), "stopped at the device attributes, not at its 30 s timeout")
        #expect(after.c_lflag == before.c_lflag, "the terminal's modes are back")
    }

    @Test func noAnswerWithinTheTimeoutAndNoTerminalToAsk() throws {
        let (master, slave) = try #require(PseudoTerminal.open())
        defer { close(master); close(slave) }
        let silent = TerminalBackground.ask(input: slave, output: slave, timeout: .milliseconds(50))
        #expect(silent == TerminalBackground.Answer(background: nil, complete: false, typed: []), "asked, no answer: the filter is to be armed")
        let (otherMaster, otherSlave) = try #require(PseudoTerminal.open())
        defer { close(otherMaster); close(otherSlave) }
        #expect(TerminalBackground.ask(input: slave, output: otherSlave) == nil, "stdin and stdout on two terminals: nothing is asked")
        let pipeEnds = UnsafeMutablePointer<Int32>.allocate(capacity: 2)
        defer { pipeEnds.deallocate() }
        try #require(pipe(pipeEnds) == 0)
        #expect(TerminalBackground.ask(input: pipeEnds[0], output: pipeEnds[1]) == nil, "not a terminal: nothing is asked")
        close(pipeEnds[0]); close(pipeEnds[1])
    }
}

/// Runs a blocking call on a thread of its own; `result()` waits for it without blocking a thread.
final class ProbeThread: @unchecked Sendable {
    private let lock = NSLock()
    private var value: TerminalBackground.Answer??
    private var waiter: CheckedContinuation<TerminalBackground.Answer?, Never>?

    /// How long the call took, on its own thread (valid once `result()` has answered).
    var duration: Duration {
        lock.lock()
        defer { lock.unlock() }
        return took
    }
    private var took: Duration = .zero

    init(_ body: @escaping @Sendable () -> TerminalBackground.Answer?) {
        Thread.detachNewThread { [self] in
            let start = ContinuousClock.now
            let v = body()
            let elapsed = ContinuousClock.now - start
            lock.lock()
            took = elapsed
            lock.unlock()
            lock.lock()
            if let waiter { self.waiter = nil; lock.unlock(); waiter.resume(returning: v) } else { value = .some(v); lock.unlock() }
        }
    }

    func result() async -> TerminalBackground.Answer? {
        await withCheckedContinuation { continuation in
            lock.lock()
            if let value { lock.unlock(); continuation.resume(returning: value) } else { waiter = continuation; lock.unlock() }
        }
    }
}

/// A pseudo-terminal pair. posix_openpt and its friends are not in Swift's Glibc module (they need
/// _XOPEN_SOURCE), so they are looked up by name.
enum PseudoTerminal {
    static func open() -> (master: Int32, slave: Int32)? {
        typealias OpenPT = @convention(c) (Int32) -> Int32
        typealias Grant = @convention(c) (Int32) -> Int32
        // ptsname_r: ptsname's one static buffer would give tests running at once the same name.
        typealias Name = @convention(c) (Int32, UnsafeMutablePointer<CChar>?, Int) -> Int32
        let any = UnsafeMutableRawPointer(bitPattern: 0)
        guard let o = dlsym(any, "posix_openpt"), let g = dlsym(any, "grantpt"), let u = dlsym(any, "unlockpt"), let n = dlsym(any, "ptsname_r") else { return nil }
        let master = unsafeBitCast(o, to: OpenPT.self)(O_RDWR | O_NOCTTY)
        var buffer = [CChar](repeating: 0, count: 128)
        guard master >= 0, unsafeBitCast(g, to: Grant.self)(master) == 0, unsafeBitCast(u, to: Grant.self)(master) == 0,
              unsafeBitCast(n, to: Name.self)(master, &buffer, buffer.count) == 0 else { return nil }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let slave = Glibc.open(name, O_RDWR | O_NOCTTY)
        guard slave >= 0 else { close(master); return nil }
        return (master, slave)
    }
}

/// A snapshot whose styles are also shown as each palette draws them.
func assertThemedSnapshot(_ grid: Grid, _ name: String, sourceLocation: SourceLocation = #_sourceLocation) {
    var order: [Style] = [.plain]
    for y in 0..<grid.height {
        for x in 0..<grid.width where !order.contains(grid[x, y].style) { order.append(grid[x, y].style) }
    }
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
    func describe(_ look: Theme.Look, colors: Int = 256) -> String {
        var parts: [String] = []
        if let ink = look.ink { parts.append("fg " + (colors >= 256 ? String(ink.index256) : ink.index8.map(String.init) ?? "default")) }
        if look.bold { parts.append("bold") }
        if look.reverse { parts.append("reverse") }
        if look.dim { parts.append("dim") }
        if look.underline { parts.append("underline") }
        return parts.isEmpty ? "plain" : parts.joined(separator: " ")
    }
    var legends = ""
    for theme in Theme.all {
        for colors in [256, 8] {
            let entries = order.dropFirst().enumerated().map { "\(alphabet[min($0.offset, alphabet.count - 1)]) \(describe(theme.look($0.element, colors: colors), colors: colors))" }
            legends += "--- \(theme), \(colors) colours: " + entries.joined(separator: "; ") + "\n"
        }
    }
    let entries = order.dropFirst().enumerated().map { "\(alphabet[min($0.offset, alphabet.count - 1)]) \(describe(Theme.monochrome($0.element)))" }
    legends += "--- no colour (NO_COLOR): " + entries.joined(separator: "; ") + "\n"
    assertSnapshot(grid, name, extra: legends, sourceLocation: sourceLocation)
}
