import Foundation
import Testing
@testable import ShopSettings

/// What the TOMLKit-based reader adds over the old hand-written subset: full TOML, `users`, `[keys]`,
/// and line numbers for every mistake.
@Suite struct TOMLFeatureTests {
    /// Everything here was refused by the old parser (inline table, multi-line strings, arrays, dotted
    /// keys, quoted keys) and must read now, with comments after every kind of value.
    @Test func fullTOMLReads() throws {
        let text = #"""
            # environments for QA
            default_environment = 'staging'   # literal string

            [environments]
            dev = { base_url = "http://127.0.0.1:9090", user = "qa-dev", read_only = false }  # inline table
            prod.base_url = "https://shop.reiterate.invalid"   # dotted key
            prod.timeout = 2.5

            [environments.staging]
            base_url = """
            https://staging.reiterate.invalid"""
            "user" = "qa-alice"            # quoted key
            ca_file = '''
            /etc/ssl/staging ca.pem'''
            users = [
                "qa-alice",   # the usual one
                "qa-whale",   # many orders
            ]
            timeout = 1_5
            token_env = "STAGING_TOKEN"    # a comment with "quotes" and = signs
            """#
        let file = try ConfigFile.parse(text, path: "/c.toml")
        #expect(file.defaultEnvironment == "staging")
        #expect(file.environments["dev"] == EnvironmentConfig(name: "dev", baseURL: "http://127.0.0.1:9090", user: "qa-dev", readOnly: false))
        #expect(file.environments["prod"] == EnvironmentConfig(name: "prod", baseURL: "https://shop.reiterate.invalid", timeout: 2.5))
        #expect(file.environments["staging"] == EnvironmentConfig(
            name: "staging", baseURL: "https://staging.reiterate.invalid", user: "qa-alice", tokenEnv: "STAGING_TOKEN",
            caFile: "/etc/ssl/staging ca.pem", timeout: 15, users: ["qa-alice", "qa-whale"]))
        #expect(file.environments.count == 3 && file.keyBindings.isEmpty)
    }

    @Test func usersReachResolvedSettings() throws {
        let file = try ConfigFile.parse("""
            [environments.staging]
            base_url = "https://staging.reiterate.invalid"
            users = ["qa-alice", "qa-whale"]
            [environments.local]
            users = ["qa-bob"]
            """, path: "/c.toml")
        let staging = try ResolvedSettings.resolve(flags: .init(env: "staging"), environment: [:], config: file)
        #expect(staging.users == ["qa-alice", "qa-whale"] && staging.sources["users"] == "config file [environments.staging]")
        // A config [environments.local] is merged over the built-in one, users included.
        let local = try ResolvedSettings.resolve(flags: .init(env: "local"), environment: [:], config: file)
        #expect(local.users == ["qa-bob"] && local.baseURL == "http://127.0.0.1:8080")
        let bare = try ResolvedSettings.resolve(flags: .init(), environment: [:], config: nil)
        #expect(bare.users == [] && bare.sources["users"] == "default")
        #expect(ResolvedSettings.merge(EnvironmentConfig(name: "local"), over: EnvironmentConfig(name: "x", users: ["a"])).users == ["a"])
        #expect(ConfigFile.keys.contains("users"))
    }

    @Test func keyBindingsInFileOrderWithLines() throws {
        let file = try ConfigFile.parse("""
            default_environment = "local"

            [keys]
            quit = ["x", "ctrl-q"]   # two keys
            refresh = "f5"
            help = [
                "?",
            ]
            orders = 'o'
            """, path: "/c.toml")
        // File order, not TOMLKit's alphabetical order.
        #expect(file.keyBindings == [
            KeyBindingConfig(action: "quit", keys: ["x", "ctrl-q"], line: 4),
            KeyBindingConfig(action: "refresh", keys: ["f5"], line: 5),
            KeyBindingConfig(action: "help", keys: ["?"], line: 6),
            KeyBindingConfig(action: "orders", keys: ["o"], line: 9),
        ])
        // Action and key names are not checked here: another module does that and reports file:line.
        let loose = try ConfigFile.parse("keys = { no-such-action = \"hyper-7\", \"two words\" = [\"a\"] }", path: "/c.toml")
        #expect(loose.keyBindings == [
            KeyBindingConfig(action: "no-such-action", keys: ["hyper-7"], line: 1),
            KeyBindingConfig(action: "two words", keys: ["a"], line: 1),
        ])
        let dotted = try ConfigFile.parse("\nkeys.quit = \"q\"\n", path: "/c.toml")
        #expect(dotted.keyBindings == [KeyBindingConfig(action: "quit", keys: ["q"], line: 2)])
    }

    @Test func otherModulesBuildErrorsInTheSameForm() {
        let error = ConfigError(path: "/c.toml", line: 4, key: "quit", message: "unknown action")
        #expect(error.description == "/c.toml:4: quit: unknown action")
        #expect(ConfigError(path: "/c.toml", message: "cannot read the file").description == "/c.toml: cannot read the file")
    }

    static let badKeys: [(String, Int, String?, String)] = [
        ("[keys]\nquit = \"x\"\nrefresh = 5", 3, "refresh", "not a whole number"),
        ("[keys]\n\nquit = []", 3, "quit", "at least one key"),
        ("[keys]\nquit = [\"x\", 1]", 2, "quit", "the list holds a whole number"),
        ("[keys]\nquit = [\"x\", \"\"]", 2, "quit", "not an empty string"),
        ("[keys]\nquit = \"\"", 2, "quit", "not an empty string"),
        ("[keys]\nquit = { key = \"x\" }", 2, "quit", "not a table"),
        ("\n[keys.quit]\nkey = \"x\"", 2, "quit", "not a table"),
        ("keys = \"q\"", 1, "keys", "expected a table [keys]"),
        ("[keys]\nquit = true", 2, "quit", "expected a key in quotes or a list of keys"),
    ]

    @Test(arguments: badKeys)
    func wrongShapeInKeysNamesItsLine(_ text: String, _ line: Int, _ key: String?, _ message: String) {
        expectError(text, line: line, key: key, message: message)
    }

    /// Mistakes found after parsing name the line where the key or table is written, also when that
    /// takes an inline table, a dotted key, a quoted key or comes after multi-line values.
    static let semantic: [(String, Int, String?, String)] = [
        ("[environments]\nstaging = { user = \"a\", base_url = \"ftp://x\" }", 2, "base_url", "expected http(s)"),
        ("environments.staging.user = \"a\"\nenvironments.staging.timeout = 900", 2, "timeout", "(0, 600]"),
        ("[environments.a]\nca_file = \"\"\"\n[environments.fake]\nbogus = 1\n\"\"\"\nbogus = 1", 6, "bogus", "unknown key"),
        ("[environments.a]\nusers = [\n  \"x\", # ] not the end\n]\n\"read_only\" = \"yes\"", 5, "read_only", "expected true or false, not a string"),
        ("[environments.a]\nuser = \"x\"\n[environments.b]\nuser = 3", 4, "user", "non-empty string in quotes, not a whole number"),
        ("[environments.a]\nusers = \"qa-alice\"", 2, "users", "expected a list of user names"),
        ("[environments.a]\nusers = [\"qa-alice\", \"\"]", 2, "users", "not an empty string"),
        ("[environments.a]\nusers = [\"qa-alice\", 7]", 2, "users", "not a whole number"),
        ("[environments.a]\nread_only = 2024-01-01", 2, "read_only", "not a date"),
        ("[environments.a]\n\n[environments.a.extra]\nx = 1", 3, nil, "unknown table [environments.a.extra]"),
        ("[environments.a]\nextra = { x = 1 }", 2, "extra", "unknown key"),
        ("title = \"shop\"", 1, "title", "unknown top-level key"),
        ("[environments]\n\nuser = \"x\"", 3, "user", "not directly in [environments]"),
        ("environments = [1]", 1, "environments", "expected tables [environments.NAME]"),
        ("[environments.a]\n[[servers]]\nname = \"x\"", 2, nil, "unknown table [servers]"),
        ("default_environment = 3\n[environments.a]", 1, "default_environment", "expected a string"),
        ("[environments.a]\ndefault_environment = \"a\"", 2, "default_environment", "unknown key"),
        ("[environments.a]\nuser = \"x\"\n\ndefault_environment = \"a\"", 4, "default_environment", "unknown key"),
        ("\n\ndefault_environment = \"b\"\n[environments.a]", 3, "default_environment", "no [environments.b]"),
    ]

    @Test(arguments: semantic)
    func semanticMistakesNameTheirLine(_ text: String, _ line: Int, _ key: String?, _ message: String) {
        expectError(text, line: line, key: key, message: message)
    }

    static let syntax: [(String, Int, String?, String)] = [
        ("[environments.a]\nbase_url = \"\"\"\nhttps://x\n\"\"\"\nuser = \"x\"\nread_only = yes", 6, "read_only", "strings need quotes"),
        ("[environments.a]\nusers = [\n  \"a\",\n  \"b\" \"c\",\n]", 4, nil, ""),
        ("[environments.a]\nuser = \"x\"\n[environments.a]", 3, nil, "set twice"),
        ("a = {b = 1,}", 1, "a", ""),
        ("[environments.a]\nuser = \"\\q\"", 2, "user", "escape"),
        ("\n\n\nx = = 1", 4, "x", ""),
        ("[environments.a]\ntimeout = 1_", 2, "timeout", ""),
        ("[environments.a]\nuser = 'unterminated\n", 2, "user", "unterminated string"),
        ("[[environments.a]\nuser = \"x\"", 1, nil, "table header"),
    ]

    @Test(arguments: syntax)
    func syntaxErrorsNameTheLineTOMLKitReports(_ text: String, _ line: Int, _ key: String?, _ message: String) {
        expectError(text, line: line, key: key, message: message)
    }

    @Test func nulIsRefusedWithItsLine() {
        expectError("[environments.a]\nuser = \"a\0b\"", line: 2, key: nil, message: "NUL")
    }

    @Test func loadReadsAFileAndReportsItsPath() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("shop-settings-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("config.toml").path
        #expect(try ConfigFile.load(path: path) == nil)
        try Data("[keys]\nquit = \"q\"\n[environments.a]\nuser = \"x\"\n".utf8).write(to: URL(fileURLWithPath: path))
        let file = try ConfigFile.load(path: path)
        #expect(file?.path == path && file?.environments["a"]?.user == "x" && file?.keyBindings.first?.line == 2)
        try Data("[environments.a]\nuser = 1\n".utf8).write(to: URL(fileURLWithPath: path))
        let error = #expect(throws: ConfigError.self) { try ConfigFile.load(path: path) }
        #expect(error?.description.hasPrefix("\(path):2: user: ") == true, "\(String(describing: error))")
    }

    /// No error, syntax or meaning, shows the library: no type names, C++ paths or enum dumps.
    @Test func errorsAreInPlainWords() {
        let texts = ConfigFileTests.mistakes.map(\.0) + Self.badKeys.map(\.0) + Self.semantic.map(\.0) + Self.syntax.map(\.0) + [
            "[a", "a =", "= 1", "a = 1\na = 2", "a.b = 1\na = 2", "[a]\n[a]", "a = [1, \"x\"", "a = \"\"\"x", "a = '''x",
            "a = 1979-05-27T25:00:00Z", "a = 0x", "a = {", "a = { b = 1\n}", "[[a]]\n[a]", "a = +", "\u{FEFF}\u{FEFF}a = 1",
            "a = \"\\uD800\"", "a = 99999999999999999999", "a = 1.", "a = .5", "[a.]", "a b = 1", "a = truee",
        ]
        for text in texts {
            do {
                _ = try ConfigFile.parse(text, path: "/c.toml")
                Issue.record("accepted a mistake: \(text)")  // each of these is one
            } catch {
                for word in ["TOMLKit", "toml++", "toml::", ".hpp", ".cpp", "Error(", "TOMLParseError", "TOMLType", "Optional("] {
                    #expect(!error.description.contains(word), "\(error.description)")
                }
                #expect(error.description.hasPrefix("/c.toml"))
            }
        }
    }

    /// Found by `make fuzz`: toml++ asserts (aborting the app, and printing its own source path) on a
    /// header whose name starts with a character a key cannot start with; such headers are refused first.
    @Test func aHeaderThatDoesNotStartAsAKeyIsAnErrorNotACrash() {
        expectError("a = 1\n[é]\nx = 1\n", line: 2, key: nil, message: "a table name is letters, digits")
        expectError("[[\u{FFFD}]]\n", line: 1, key: nil, message: "a table name is")
        expectError("[ ]\n", line: 1, key: nil, message: "a table name is")
        // And a `}` where a list expects a value.
        expectError("a = 1\nduirean = [}}}}}}}}}*}i\n", line: 2, key: nil, message: "a “}” inside a list")
        expectError("a = [1,\n # c\n }]\n", line: 3, key: nil, message: "a “}” inside a list")
        // Not a `}` inside a list: the check that refuses one passes these by (what toml++ then makes of
        // them is its own affair: `{b=1,}` is TOML 1.1, and `a` is no setting).
        for fine in ["a = [ 1, ]", "a = {b=1,}", "a = [{b = 1}, {c = 2}]"] {
            #expect(TOMLSourceMap(fine).braceInArrayLine == nil, "\(fine)")
            do {
                _ = try ConfigFile.parse(fine, path: "/c.toml")
            } catch {
                #expect(!error.message.contains("inside a list"), "\(fine): \(error.description)")
            }
        }
        // A list with a trailing comma where a setting takes one reads whole (nil, a failure, if it threw).
        let read = try? ConfigFile.parse("[keys]\nquit = [ \"q\", \"x\", ]\n", path: "/c.toml")
        #expect(read?.keyBindings.first?.keys == ["q", "x"])
        #expect(TOMLSourceMap("a = [1,\n # c\n }]\n").braceInArrayLine == 3)  // and the check does see one
        // Not headers: a quoted name, a dotted one, `[` inside strings and arrays.
        for fine in ["[\"é\"]\nx = 1", "[a.\"é\"]\nx = 1", "s = \"\"\"\n[é]\n\"\"\"", "x = [\n  [1],\n]", "[environments.\"é\"]\nuser = \"a\""] {
            #expect(TOMLSourceMap(fine).badHeaderLine == nil, "\(fine)")
            do {
                _ = try ConfigFile.parse(fine, path: "/c.toml")
            } catch {
                #expect(!error.message.contains("a table name is"), "\(fine): \(error.description)")  // other mistakes, not this one
            }
        }
        #expect((try? ConfigFile.parse("[environments.\"é\"]\nuser = \"a\"", path: "/c.toml"))?.environments["é"]?.user == "a")
    }

    /// Found by review: the line finder runs before toml++ now, and must not recurse past its limit.
    @Test func aValueNestedThousandsDeepIsAnErrorNotAStackOverflow() {
        let deep = "a = " + String(repeating: "[", count: 200_000) + "\n"
        #expect(throws: ConfigError.self) { try ConfigFile.parse(deep, path: "/c.toml") }
    }

    /// Found by `make fuzz`: toml++ quotes what it read, a line break included; the message stays one line.
    @Test func aSyntaxErrorIsOneLineEvenWhenWhatWasReadEndsTheLine() {
        expectError("mouse = fal\nx = 1\n", line: 1, key: "mouse", message: "")
        let error = #expect(throws: ConfigError.self) { try ConfigFile.parse("mouse = fal\nx = 1\n", path: "/c.toml") }
        #expect(error.map { !$0.description.contains("\n") } == true, "\(String(describing: error))")
    }

    /// `theme =`: the six names in any case; any other word is a mistake naming them all.
    @Test func themeNamesAndMistakes() throws {
        #expect(try ConfigFile.parse("theme = \"light-colorblind\"\n", path: "/c.toml").theme == ThemeSetting(.light, colorBlindSafe: true))
        #expect(try ConfigFile.parse("theme = \"Dark\"\n", path: "/c.toml").theme == ThemeSetting(.dark))
        #expect(try ConfigFile.parse("mouse = true\n", path: "/c.toml").theme == nil)
        #expect(ThemeSetting.names.compactMap(ThemeSetting.init(name:)).map(\.description) == ThemeSetting.names)
        expectError("# palette\ntheme = \"solarized\"\n", line: 2, key: "theme", message: "expected one of \"auto\", \"dark\", \"light\", \"auto-colorblind\", \"dark-colorblind\", \"light-colorblind\", not \"solarized\"")
        expectError("theme = 3\n", line: 1, key: "theme", message: "not a whole number")
    }

    private func expectError(_ text: String, line: Int, key: String?, message: String, sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            let file = try ConfigFile.parse(text, path: "/q/config.toml")
            Issue.record("accepted: \(text) → \(file)", sourceLocation: sourceLocation)
        } catch {
            #expect(error.line == line, "\(error.description)", sourceLocation: sourceLocation)
            #expect(error.key == key, "\(error.description)", sourceLocation: sourceLocation)
            #expect(message.isEmpty || error.message.contains(message), "\(error.description)", sourceLocation: sourceLocation)
            #expect(error.description.hasPrefix("/q/config.toml:\(line): " + (key.map { "\($0): " } ?? "")), sourceLocation: sourceLocation)
        }
    }
}

/// The line finder on its own, on the constructs that could throw its count off.
@Suite struct TOMLSourceMapTests {
    @Test func findsKeysTablesAndOrder() {
        let map = TOMLSourceMap(#"""
            top = 1979-05-27 07:32:00 # a date and a time separated by a space
            [ a . "b c" ]   # spaces and a quoted part
            x = """
            [not.a.table]
            y = 1
            \"""still inside\"""" # ends with extra quotes
            'lit' = '''
            z = 2
            '''
            arr = [ [1, 2], { in = 1 }, "]", ']', # ] in a comment
              3 ]
            inl = { p = 1, q.r = { s = "}" } }
            [[list]]
            k = 1
            [[list]]
            k = 2
            [c]
            d.e = 1
            "quo\"ted" = 2
            """#)
        #expect(map.line(of: ["top"]) == 1)
        #expect(map.line(of: ["a", "b c"]) == 2 && map.isHeader(["a", "b c"]) && map.line(of: ["a"]) == 2 && !map.isHeader(["a"]))
        #expect(map.line(of: ["a", "b c", "x"]) == 3)
        #expect(map.line(of: ["not", "a", "table"]) == nil && map.line(of: ["a", "b c", "y"]) == nil)
        #expect(map.line(of: ["a", "b c", "lit"]) == 7 && map.line(of: ["a", "b c", "z"]) == nil)
        #expect(map.line(of: ["a", "b c", "arr"]) == 10 && map.line(of: ["a", "b c", "in"]) == nil)
        #expect(map.line(of: ["a", "b c", "inl"]) == 12 && map.line(of: ["a", "b c", "inl", "q", "r", "s"]) == 12)
        #expect(map.line(of: ["list"]) == 13 && map.line(of: ["list", "k"]) == 14)
        #expect(map.line(of: ["c"]) == 17 && map.line(of: ["c", "d", "e"]) == 18 && map.line(of: ["c", "d"]) == 18)
        #expect(map.line(of: ["c", "quo\"ted"]) == 19)
        let order = [["top"], ["a", "b c", "x"], ["a", "b c", "inl"], ["list"], ["c", "quo\"ted"]].map(map.order(of:))
        #expect(order == order.sorted() && map.order(of: ["nowhere"]) == Int.max)
    }

    @Test func multiLineInlineTablesAndCRLF() {
        let map = TOMLSourceMap("[t]\r\na = 1\r\n\r\nb = [\r\n 1,\r\n]\r\nc = 2\r\n")
        #expect(map.line(of: ["t", "a"]) == 2 && map.line(of: ["t", "b"]) == 4 && map.line(of: ["t", "c"]) == 7)
    }
}
