import Testing
@testable import TerminalText

@Suite struct SanitizerTests {
    func isSafe(_ s: String) -> Bool {
        s.unicodeScalars.allSatisfy { scalar in
            let v = scalar.value
            return !(v < 0x20 || v == 0x7F || (0x80...0x9F).contains(v)) || v == 0x0A
        } && !s.unicodeScalars.contains { $0.properties.generalCategory == .format }
    }

    @Test func escapeSequencesAreRemovedWhole() {
        #expect(Sanitizer.line("\u{1B}[31;1mRED\u{1B}[0m ok") == "RED ok")
        #expect(Sanitizer.line("a\u{1B}]0;title\u{07}b") == "ab")
        #expect(Sanitizer.line("a\u{1B}]52;c;ZXZpbA==\u{1B}\\b") == "ab")
        #expect(Sanitizer.line("a\u{1B}P+q544e\u{1B}\\b") == "ab")
        #expect(Sanitizer.line("a\u{9B}31mb\u{9D}osc\u{9C}c") == "abc")
        #expect(Sanitizer.line("a\u{1B}7b\u{1B}(Bc") == "abc")
        #expect(Sanitizer.line("cut\u{1B}]8;;http://x") == "cut")
        #expect(Sanitizer.line("end\u{1B}") == "end")
    }

    @Test func controlsBecomeVisiblePlaceholders() {
        #expect(Sanitizer.line("a\u{07}b\u{00}c\u{7F}d\u{85}e") == "a�b�c�d�e")
        #expect(Sanitizer.line("tab\there") == "tab here")
        #expect(Sanitizer.line("one\ntwo\r\nthree\rfour\u{2028}five") == "one two three four five")
        #expect(Sanitizer.lines("one\ntwo\r\nthree") == ["one", "two", "three"])
    }

    @Test func bidiAndInvisibleFormatCharactersAreDropped() {
        #expect(Sanitizer.line("\u{202E}gnp.exe\u{202C}") == "gnp.exe")
        #expect(Sanitizer.line("\u{2066}x\u{2069}\u{200F}\u{200E}") == "x")
        #expect(Sanitizer.line("zero\u{200B}width\u{200D}\u{FEFF}\u{2060}\u{00AD}") == "zerowidth")
        #expect(Sanitizer.line("❤\u{FE0F}") == "❤")
        #expect(Sanitizer.line("👩\u{200D}👩\u{200D}👧") == "👩👩👧")
        #expect(Sanitizer.line("👍🏽") == "👍")
    }

    @Test func combiningMarksAreKeptButNotStacked() {
        #expect(Sanitizer.line("e\u{301}") == "e\u{301}")
        #expect(Sanitizer.line("e" + String(repeating: "\u{301}", count: 8)).unicodeScalars.count == 1 + Sanitizer.maxCombining)
        #expect(Sanitizer.line("\u{301}start") == "start")
        #expect(Sanitizer.line("Thai ตลาด") == "Thai ตลาด")
    }

    @Test func everyHostileSampleComesOutSafe() {
        let samples = [
            "\u{1B}[2J\u{1B}[Hcleared", "\u{1B}]0;t\u{07}", "\u{1B}[6n\u{1B}[c", "next\u{85}line \u{90}DCS\u{9C}",
            "\u{202E}x\u{202C}", "Z\u{335}\u{321}\u{34E}a", "tab\there\rCR\u{8}\u{8}BS\u{7F}DEL\u{7}BEL\u{0}NUL",
            "👩‍👩‍👧‍👦🇯🇵❤️👍🏽", "\u{E0001}\u{E0041}tag",
        ]
        for sample in samples {
            let clean = Sanitizer.line(sample)
            #expect(isSafe(clean), "\(clean.unicodeScalars.map { String($0.value, radix: 16) })")
            #expect(!clean.contains("\n"))
        }
    }

    @Test func plainTextIsUntouched() {
        for text in ["hello", "Café de Flore", "東京 Night Walk", "Ocean Drift 🌊", ""] {
            #expect(Sanitizer.line(text) == text)
        }
    }
}

@Suite struct DisplayWidthTests {
    @Test func widths() {
        #expect(DisplayWidth.of("abc") == 3)
        #expect(DisplayWidth.of("東京") == 4)
        #expect(DisplayWidth.of("ＦＵＬＬ") == 8)
        #expect(DisplayWidth.of("한국") == 4)
        #expect(DisplayWidth.of("🌊") == 2)
        #expect(DisplayWidth.of("e\u{301}") == 1)
        #expect(DisplayWidth.of("ตลาด") == 4)  // า is a spacing vowel
        #expect(DisplayWidth.of("ตี่") == 1)    // two nonspacing marks on one base
        #expect(DisplayWidth.of("❤") == 1)   // text presentation by default
        #expect(DisplayWidth.of("🇯🇵") == 2)   // two regional indicators, 1 each
        #expect(DisplayWidth.of("Ὠκεανός") == 7)
        #expect(DisplayWidth.of("\u{D7B0}\u{D7FB}") == 0)  // Hangul Jamo Extended-B, conjoining
    }

    @Test func truncationNeverSplitsAWideCharacterOrCluster() {
        #expect(Columns.truncate("東京 Night", to: 4) == "東…")
        #expect(Columns.truncate("東京 Night", to: 5) == "東京…")
        #expect(Columns.truncate("e\u{301}e\u{301}e\u{301}", to: 2) == "e\u{301}…")
        #expect(Columns.truncate("short", to: 10) == "short")
        #expect(Columns.truncate("abc", to: 0) == "")
        for width in 1...12 {
            let cut = Columns.truncate("🌊東京 café Ω 😀😀", to: width)
            #expect(DisplayWidth.of(cut) <= width)
        }
    }

    @Test func fitPadsToExactWidth() {
        for text in ["東京", "abc", "🌊 wave", "e\u{301}tude", "a very long line of text"] {
            for width in 1...12 {
                #expect(DisplayWidth.of(Columns.fit(text, to: width)) == width, "\(text) @ \(width)")
                #expect(DisplayWidth.of(Columns.fit(text, to: width, alignRight: true)) == width)
            }
        }
        #expect(Columns.fit("7", to: 3, alignRight: true) == "  7")
    }

    @Test func wrapKeepsWordsAndBreaksLongOnes() {
        #expect(Columns.wrap("the quick brown fox", to: 10) == ["the quick", "brown fox"])
        #expect(Columns.wrap("Supercalifragilistic", to: 8) == ["Supercal", "ifragili", "stic"])
        #expect(Columns.truncateMiddle("GET /x: HTTP 503: very long message here — it may have been applied", to: 30)
                == "GET /x: HTTP 503: … applied")
        #expect(Columns.truncateMiddle("GET /api/v1/balance: connection refused by 127.0.0.1 — is the server running?", to: 60)
                == "GET /api/v1/balance: connection refused by … server running?")
        #expect(Columns.truncateMiddle("東京東京東京東京", to: 7) == "東京東…" && Columns.truncateMiddle("short", to: 9) == "short")
        let long = "✖ GET /api/v1/balance: HTTP 503 Service Unavailable: " + String(repeating: "x", count: 300) + " the end [injected_fault]"
        #expect(Columns.truncateMiddle(long, to: 45) == "✖ GET /api/v1/balance: HTTP 503…jected_fault]")
        // A URL breaks after its delimiters, never inside `per_page=50`, and starts on the line it follows.
        #expect(Columns.wrap("GET /api/v1/cheer_history?user_id=qa-alice&page=1&per_page=50", to: 46)
                == ["GET /api/v1/cheer_history?user_id=qa-alice&", "page=1&per_page=50"])
        #expect(Columns.wrap("'http://127.0.0.1:42323/api/v1/cheer_history?user_id=qa-alice&page=1&per_page=50'", to: 36)
                == ["'http://127.0.0.1:42323/api/v1/", "cheer_history?user_id=qa-alice&", "page=1&per_page=50'"])
        #expect(Columns.wrap("東京東京東京", to: 5) == ["東京", "東京", "東京"])
        #expect(Columns.wrap("", to: 5) == [""])
        for line in Columns.wrap("ありがとう！毎晩聴いています。 and some English words", to: 7) {
            #expect(DisplayWidth.of(line) <= 7)
        }
    }

    /// Found by `make fuzz` (Tests/Fuzz/corpus/fuzz-text/crash-wrap-wide-cluster): a space carrying a
    /// wide spacing mark (U+302E) is one cluster of 3 columns; wrapped to 2 it came out 3 wide.
    @Test func aClusterWiderThanTheLineIsCutNotOverflowed() {
        let text = Sanitizer.line("ab \u{302E}evil")
        for width in 1...4 {
            let lines = Columns.wrap(text, to: width)
            #expect(lines.allSatisfy { DisplayWidth.of($0) <= width }, "width \(width): \(lines)")
        }
        #expect(Columns.wrap("東", to: 1) == ["…"])
    }
}
