import ArchivistBase

extension Filter {
    /// Reads a MongoDB filter document: `{"section_name": "Sports", "pub_date": {"$gte": "2015-07-01"}}`.
    public init(json: JSONValue) throws(StoreError) {
        self = try Filter.parseDocument(json, at: "filter")
    }

    /// Reads a MongoDB filter document from JSON text.
    public init(jsonText: String) throws(StoreError) {
        let value: JSONValue
        do throws(JSONSyntaxError) {
            value = try JSONParser.parse(jsonText)
        } catch {
            throw .invalidFilter("column \(error.offset + 1): \(error.reason)")
        }
        try self.init(json: value)
    }

    static func parseDocument(_ value: JSONValue, at location: String, pathPrefix: String = "") throws(StoreError) -> Filter {
        guard case .object(let members) = value else {
            throw .invalidFilter("\(location): expected an object, found \(value.typeName)")
        }
        var filters: [Filter] = []
        for member in members {
            let key = member.key
            switch key {
            case "$and", "$or", "$nor":
                guard case .array(let items) = member.value, !items.isEmpty else {
                    throw .invalidFilter("\(key): expected a non-empty array of filters")
                }
                var parts: [Filter] = []
                for (index, item) in items.enumerated() {
                    parts.append(try parseDocument(item, at: "\(key)[\(index)]", pathPrefix: pathPrefix))
                }
                filters.append(key == "$and" ? .and(parts) : key == "$or" ? .or(parts) : .nor(parts))
            case "$text":
                if !pathPrefix.isEmpty {
                    // As in MongoDB: a text search is of whole documents, not of array elements.
                    throw .invalidFilter("\(location): $text applies to whole documents, not inside $elemMatch")
                }
                guard case .string(let search)? = member.value["$search"] else {
                    throw .invalidFilter("$text: expected {\"$search\": \"words\"}")
                }
                filters.append(.text(search))
            default:
                if key.hasPrefix("$") { throw .invalidFilter("unknown top-level operator '\(key)'") }
                if key.isEmpty { throw .invalidFilter("\(location): empty field name") }
                filters.append(.field(key, try parseConditions(member.value, path: pathPrefix + key)))
            }
        }
        return filters.count == 1 ? filters[0] : filters.isEmpty ? .all : .and(filters)
    }

    /// Whether an object is made of operators (`{"$gte": 1}`) rather than being a value to match.
    static func isOperatorObject(_ value: JSONValue) -> Bool {
        guard case .object(let members) = value, !members.isEmpty else { return false }
        return members.allSatisfy { $0.key.hasPrefix("$") }
    }

    static func parseConditions(_ value: JSONValue, path: String) throws(StoreError) -> [Condition] {
        guard isOperatorObject(value), case .object(let members) = value else { return [.eq(value)] }
        var conditions: [Condition] = []
        let options = value["$options"]
        for member in members {
            let operand = member.value
            func array() throws(StoreError) -> [JSONValue] {
                guard case .array(let items) = operand else {
                    throw .invalidFilter("\(member.key) at '\(path)': expected an array, found \(operand.typeName)")
                }
                return items
            }
            switch member.key {
            case "$eq": conditions.append(.eq(operand))
            case "$ne": conditions.append(.ne(operand))
            case "$gt": conditions.append(.gt(operand))
            case "$gte": conditions.append(.gte(operand))
            case "$lt": conditions.append(.lt(operand))
            case "$lte": conditions.append(.lte(operand))
            case "$in": conditions.append(.in(try array()))
            case "$nin": conditions.append(.nin(try array()))
            case "$all": conditions.append(.all(try array()))
            case "$exists":
                switch operand {
                case .bool(let flag): conditions.append(.exists(flag))
                case .number(let literal): conditions.append(.exists((Double(literal) ?? 0) != 0))
                default: throw .invalidFilter("$exists at '\(path)': expected true or false")
                }
            case "$size":
                guard case .number(let literal) = operand, let count = Int(literal), count >= 0 else {
                    throw .invalidFilter("$size at '\(path)': expected a non-negative integer")
                }
                conditions.append(.size(count))
            case "$regex":
                guard case .string(let pattern) = operand else { throw .invalidFilter("$regex at '\(path)': expected a string") }
                var flags = ""
                if let options {
                    guard case .string(let text) = options else { throw .invalidFilter("$options at '\(path)': expected a string") }
                    flags = text
                }
                guard RegexCache.expression(pattern, options: flags) != nil else {
                    throw .invalidFilter("$regex at '\(path)': invalid regular expression '\(pattern)'")
                }
                conditions.append(.regex(pattern, options: flags))
            case "$options":
                guard value["$regex"] != nil else { throw .invalidFilter("$options at '\(path)': needs $regex") }
            case "$elemMatch":
                guard operand.isObject else { throw .invalidFilter("$elemMatch at '\(path)': expected an object") }
                if isOperatorObject(operand), case .object(let inner) = operand,
                    !inner.contains(where: { ["$and", "$or", "$nor", "$text"].contains($0.key) })
                {
                    conditions.append(.elemMatch(.conditions(try parseConditions(operand, path: path))))
                } else {
                    conditions.append(
                        .elemMatch(.filter(try parseDocument(operand, at: "$elemMatch at '\(path)'", pathPrefix: path + "."))))
                }
            case "$not":
                guard isOperatorObject(operand) else {
                    throw .invalidFilter("$not at '\(path)': expected an object of operators such as {\"$gt\": 5}")
                }
                conditions.append(.not(try parseConditions(operand, path: path)))
            default:
                throw .invalidFilter("unknown operator '\(member.key)' at '\(path)'")
            }
        }
        return conditions
    }
}

extension Filter: ExpressibleByDictionaryLiteral {
    /// DataStoreKit's dictionary style: keys are a path, optionally followed by an operator
    /// (`"pub_date >="`, `"section_name"`, `"headline.main ~"`, `"news_desk in"`); all must hold.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        var filters: [Filter] = []
        for (key, value) in elements {
            let parts = key.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            let path = parts.first ?? key
            let op = parts.count > 1 ? parts[1] : "="
            let condition: Condition
            switch op {
            case "~": condition = .contains(value.stringValue ?? "")
            case "in":
                if case .array(let items) = value { condition = .in(items) } else { condition = .in([value]) }
            case "exists": condition = .exists(value != .bool(false))
            default: condition = Condition.comparison(op, value) ?? .eq(value)
            }
            filters.append(.field(path, [condition]))
        }
        self = filters.count == 1 ? filters[0] : .and(filters)
    }
}
