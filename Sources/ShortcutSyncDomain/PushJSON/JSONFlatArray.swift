import Foundation

/// A JSON array of nulls, booleans, strings and arrays of strings, read by the push's parser
/// (`JSONParser`, with its strictness): what the fold's read of the log gets for an event's
/// fields that are not a donation's (`FoldLogCoding.Extras` in the store).
public enum JSONFlatArray {
    public enum Element: Sendable, Hashable {
        case null
        case bool(Bool)
        case string(String)
        case strings([String])

        public var string: String? { if case .string(let string) = self { string } else { nil } }
        public var strings: [String]? { if case .strings(let strings) = self { strings } else { nil } }
        public var bool: Bool? { if case .bool(let bool) = self { bool } else { nil } }
    }

    /// The elements of the array `text` holds; nil for text that is not JSON, not an array, or
    /// holds a number, an object, or an array of anything but strings.
    public static func elements(of text: String) -> [Element]? {
        var text = text
        return text.withUTF8 { utf8 in
            let bytes = UnsafeRawBufferPointer(utf8)
            guard let tape = try? JSONParser.parse(bytes) else { return nil }
            return tape.withDocument(over: bytes) { document -> [Element]? in
                let root = document.root
                guard root.kind == .array else { return nil }
                var elements: [Element] = []
                elements.reserveCapacity(root.elements.count)
                for node in root.elements {
                    guard let element = element(node) else { return nil }
                    elements.append(element)
                }
                return elements
            }
        }
    }

    private static func element(_ node: JSONNode) -> Element? {
        switch node.kind {
        case .null: return .null
        case .true: return .bool(true)
        case .false: return .bool(false)
        case .string: return node.string.map(Element.string)
        case .array:
            var strings: [String] = []
            strings.reserveCapacity(node.elements.count)
            for item in node.elements {
                guard let string = item.string else { return nil }
                strings.append(string)
            }
            return .strings(strings)
        case .number, .object: return nil
        }
    }
}
