/// Splits a migration file into statements, because the extended query protocol runs one at a time.
///
/// It knows what can hide a semicolon: single-quoted strings, double-quoted identifiers,
/// dollar-quoted bodies (`$$ … $$`, `$fn$ … $fn$`), and `--` and `/* */` comments.
enum SQLScript {
    static func statements(in script: String) -> [String] {
        var statements: [String] = []
        var current = ""
        let chars = Array(script)
        var index = 0

        func peek(_ offset: Int) -> Character? {
            index + offset < chars.count ? chars[index + offset] : nil
        }

        while index < chars.count {
            let char = chars[index]
            if char == "-" && peek(1) == "-" {
                while index < chars.count && chars[index] != "\n" { index += 1 }
                continue
            }
            if char == "/" && peek(1) == "*" {
                index += 2
                while index < chars.count && !(chars[index] == "*" && peek(1) == "/") { index += 1 }
                index += 2
                continue
            }
            if char == "'" || char == "\"" {
                current.append(char)
                index += 1
                while index < chars.count {
                    current.append(chars[index])
                    if chars[index] == char {
                        if peek(1) == char {  // an escaped quote
                            index += 1
                            current.append(chars[index])
                        } else {
                            break
                        }
                    }
                    index += 1
                }
                index += 1
                continue
            }
            if char == "$", let tag = dollarTag(chars, at: index) {
                current += tag
                index += tag.count
                while index < chars.count {
                    if chars[index] == "$", String(chars[index..<min(chars.count, index + tag.count)]) == tag {
                        current += tag
                        index += tag.count
                        break
                    }
                    current.append(chars[index])
                    index += 1
                }
                continue
            }
            if char == ";" {
                appendTrimmed(current, to: &statements)
                current = ""
            } else {
                current.append(char)
            }
            index += 1
        }
        appendTrimmed(current, to: &statements)
        return statements
    }

    /// The dollar-quote tag starting at `index` (`$$` or `$name$`), if one does.
    private static func dollarTag(_ chars: [Character], at index: Int) -> String? {
        var end = index + 1
        while end < chars.count, chars[end] == "_" || chars[end].isLetter || (end > index + 1 && chars[end].isNumber) {
            end += 1
        }
        guard end < chars.count, chars[end] == "$" else { return nil }
        return String(chars[index...end])
    }

    private static func appendTrimmed(_ statement: String, to statements: inout [String]) {
        let trimmed = statement.trimmingCharacters(in: .whitespacesAndNewlines)
        if !trimmed.isEmpty { statements.append(trimmed) }
    }
}

import Foundation
