import ArchivistBase
import Foundation

/// Turns one JSON value into a typed value, or nil when the value does not fit, in the spirit of
/// Mantle's value transformers. Transformers never throw: `null`, a wrong type or an unreadable
/// text gives nil, and the mapping then tries the next key path or leaves the property empty.
///
/// (Named `JSONTransformer` so as not to clash with Foundation's `ValueTransformer` class.)
struct JSONTransformer<Value>: Sendable {
    /// The conversion; nil when the value does not fit.
    let transform: @Sendable (JSONValue) -> Value?

    /// A transformer from a conversion.
    init(_ transform: @escaping @Sendable (JSONValue) -> Value?) {
        self.transform = transform
    }

    /// The typed value of `json`, or nil when it does not fit.
    func callAsFunction(_ json: JSONValue) -> Value? {
        transform(json)
    }
}

extension JSONTransformer where Value == String {
    /// A string exactly as given, the empty string included; any other type gives nil.
    static var string: JSONTransformer {
        JSONTransformer { json in
            if case .string(let text) = json { return text }
            return nil
        }
    }

    /// A string with at least one character that is not white space, as given; `""` and
    /// white space only give nil, so the 2025 schema's `"kicker": ""` means the same as the
    /// 2019 schema's `"kicker": null`.
    static var text: JSONTransformer {
        JSONTransformer { json in
            guard case .string(let text) = json else { return nil }
            return text.unicodeScalars.contains(where: { !$0.properties.isWhitespace }) ? text : nil
        }
    }
}

extension JSONTransformer where Value == Int {
    /// An integer given as a number (`879`, or a whole `879.0`) or as a string of one (`"879"`,
    /// the 2016 schema's `word_count` and keyword `rank`); white space around a string is
    /// ignored. Fractions, non-numeric strings and other types give nil.
    static var integer: JSONTransformer {
        JSONTransformer { json in
            switch json {
            case .number(let literal):
                return IntegerText.value(of: literal)
            case .string(let text):
                return IntegerText.value(of: text.trimmingCharacters(in: .whitespaces))
            default:
                return nil
            }
        }
    }
}

extension JSONTransformer where Value == Bool {
    /// A yes/no flag: `"Y"`/`"N"` (the keywords' `is_major` and `major`), `"yes"`/`"no"`,
    /// `"true"`/`"false"` in any case, or a JSON boolean. Anything else gives nil.
    static var flag: JSONTransformer {
        JSONTransformer { json in
            switch json {
            case .bool(let value):
                return value
            case .string(let text):
                switch text.lowercased() {
                case "y", "yes", "true": return true
                case "n", "no", "false": return false
                default: return nil
                }
            default:
                return nil
            }
        }
    }
}

extension JSONTransformer where Value == Date {
    /// An ISO 8601 date string, read exactly as the store's queries read dates (`ISODate`):
    /// `2016-11-19T11:06:34Z`, `2018-10-26T17:11:14+0000`, `…+00:00` or any other offset, optional
    /// fractional seconds, a time without offset (UTC) and a bare day (`2008-09-18`, midnight UTC).
    /// Anything else, including an impossible date such as February 30, gives nil.
    static var date: JSONTransformer {
        JSONTransformer { json in
            guard case .string(let text) = json, let milliseconds = ISODate.instant(of: text) else { return nil }
            return Date(timeIntervalSince1970: Double(milliseconds) / 1000)
        }
    }
}

extension JSONTransformer {
    /// Each element of an array through `element`, dropping the elements it refuses. A value that
    /// is not an array (`null`, an object) gives nil.
    static func list<Element>(of element: JSONTransformer<Element>) -> JSONTransformer where Value == [Element] {
        JSONTransformer { json in
            guard case .array(let values) = json else { return nil }
            return values.compactMap { element.transform($0) }
        }
    }
}

extension JSONTransformer where Value: JSONMappable {
    /// An object read through `Value`'s mapping table: `make` builds the value from its required
    /// members (nil refuses the object), then the table fills in the rest. Anything that is not
    /// an object gives nil.
    static func mapped(_ make: @escaping @Sendable (JSONValue) -> Value?) -> JSONTransformer {
        JSONTransformer { json in
            guard case .object = json, var value = make(json) else { return nil }
            value.applyFieldMappings(from: json)
            return value
        }
    }
}

/// Whole numbers in text: integer literals, and whole decimal literals (`879.0`, `1e3`).
enum IntegerText {
    /// The integer `text` spells, or nil.
    static func value(of text: String) -> Int? {
        if let value = Int(text) { return value }
        // Only plain decimal notation goes on to Double (no "nan", "inf" or hex floats).
        guard !text.isEmpty, text.utf8.allSatisfy({ ($0 >= 48 && $0 <= 57) || $0 == 43 || $0 == 45 || $0 == 46 || $0 == 69 || $0 == 101 }),
            let number = Double(text), number.rounded() == number, abs(number) < 9.0e15
        else { return nil }
        return Int(number)
    }
}
