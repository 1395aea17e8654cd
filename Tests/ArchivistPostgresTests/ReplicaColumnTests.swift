import ArchivistBase
import ArchivistStore
import Testing

@testable import ArchivistPostgres

/// The pure parts of the copy: column names and types, values, COPY escapes, table names,
/// `tsvector` literals, and passwords kept out of messages.
@Suite("replica columns, names and escapes")
struct ReplicaColumnTests {
    @Test(
        "a projected path gets a plain lower-case column name",
        arguments: [
            ("headline.main", "headline_main"), ("pub_date", "pub_date"), ("keywords.value", "keywords_value"),
            ("Byline.Original", "byline_original"), ("id", "f_id"), ("9lives", "f_9lives"), ("a..b", "a_b"), ("terms", "f_terms"),
            ("é", "f_"),
        ])
    func columnNames(path: String, name: String) {
        #expect(ReplicaColumn.name(for: path) == name)
    }

    @Test(
        "the values of a field decide its column's type, or that it has none",
        arguments: [
            (["\"2020-01-02T03:04:05Z\"", "\"1851-09-18\""], ReplicaColumn.Kind?.some(.timestamp)),
            (["12", "\"856\"", "null"], .some(.integer)),
            (["1.5", "2"], .some(.number)),
            (["\"Sports\"", "\"World\""], .some(.text)),
            (["[\"a\",\"b\"]", "\"c\""], .some(.textArray)),
            (["true", "false"], .some(.boolean)),
            (["\"Sports\"", "3.5"], nil),
            (["{\"a\":1}"], nil),
            (["null"], nil),
            (["[1,2]"], nil),
        ])
    func columnKinds(values: [String], kind: ReplicaColumn.Kind?) throws {
        let parsed = try values.map { try JSONParser.parse($0) }
        #expect(ReplicaColumn.kind(of: parsed) == kind)
    }

    @Test(
        "a value that does not fit its column's type is NULL there",
        arguments: [
            (ReplicaColumn.Kind.timestamp, "\"2020-01-02T03:04:05Z\"", CopyValue.text("2020-01-02T03:04:05.000Z")),
            (.timestamp, "\"not a date\"", .null),
            (.integer, "\"856\"", .text("856")),
            (.integer, "12.0", .text("12")),
            (.integer, "12.5", .null),
            (.textArray, "[\"a\\\"b\",\"c\\\\d\"]", .text("{\"a\\\"b\",\"c\\\\d\"}")),
            (.textArray, "[\"a\",1]", .null),
            (.text, "7", .null),
            (.boolean, "true", .text("t")),
        ])
    func columnValues(kind: ReplicaColumn.Kind, value: String, expected: CopyValue) throws {
        let column = ReplicaColumn(path: "f", name: "f", kind: kind)
        #expect(column.value(of: try JSONParser.parse(value)) == expected)
    }

    @Test("COPY's text format escapes backslash, tab, newline and carriage return, and nothing else")
    func copyEscapes() {
        var buffer: [UInt8] = []
        CopySink.encode([.text("a\\b\tc\nd\re \"é\""), .bytes(Array("\t".utf8)), .null], into: &buffer)
        #expect(String(decoding: buffer, as: UTF8.self) == "a\\\\b\\tc\\nd\\re \"é\"\t\\t\t\\N\n")
    }

    @Test(
        "a table name is one or two plain SQL names, quoted when written",
        arguments: [
            ("articles", "\"articles\"", true), ("nyt.articles", "\"nyt\".\"articles\"", true), ("_a1", "\"_a1\"", true),
            ("1a", "", false), ("a;drop", "", false), ("a.b.c", "", false), ("", "", false), ("a b", "", false),
            ("x\"y", "", false), (String(repeating: "a", count: 41), "", false),
        ])
    func tableNames(text: String, sql: String, valid: Bool) {
        let parsed = try? TableName(text)
        #expect((parsed != nil) == valid)
        if let parsed { #expect(parsed.sql == sql) }
    }

    @Test("a document's words become a tsvector literal weighted by field, each word once with its positions")
    func termsLiteral() throws {
        let search = TextSearch(fields: [.init("headline", weight: 3), .init("keywords", weight: 2), .init("body", weight: 1)])
        let document = try JSONParser.parse(#"{"headline":"Climate, climate!","keywords":["L'été"],"body":"O'Neil's climate"}"#)
        #expect(Replicator.terms(of: document, textSearch: search) == "'climate':1A,2A,5C 'lete':3B 'oneils':4C")
    }

    @Test(
        "a document goes into COPY compact, \\u0000 (which jsonb refuses) as U+FFFD, every JSON backslash doubled",
        arguments: [
            (#"{"a":"x\u0000y"}"#, #"{"a":"x\\ufffdy"}"#),
            (#"{"a":"x\\u0000y"}"#, #"{"a":"x\\\\u0000y"}"#),
            ("{\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": \"two  words \"\n}\n", #"{"a":[1,2],"b":"two  words "}"#),
            (#"{ "q" : "say \"hi\" " , "r" : "\\" }"#, #"{"q":"say \\"hi\\" ","r":"\\\\"}"#),
            (#"{"e":"caf\u00e9 \n"}"#, #"{"e":"caf\\u00e9 \\n"}"#),
        ])
    func documentInCopy(document: String, line: String) {
        var encoded: [UInt8] = []
        CopySink.encode([.document(Array(document.utf8))], into: &encoded)
        #expect(String(decoding: encoded, as: UTF8.self) == line + "\n")
    }

    /// Whether libpq can be loaded here (its parser reads connection strings).
    static let hasLibpq = (try? PostgresLibrary.shared()) != nil

    @Test(
        "passwords in a connection string or PGPASSWORD never reach a message", .enabled(if: hasLibpq, "libpq.so.5 is not installed"),
        arguments: [
            ("postgresql://alice:S3cret%21@db.example.org/news", "S3cret!"),
            ("host=db.example.org user=alice password=S3cret dbname=news", "S3cret"),
            ("host=db.example.org password='S3 cret' dbname=news", "S3 cret"),
        ])
    func passwordsRedacted(conninfo: String, secret: String) throws {
        let info = try ConnectionInfo(conninfo, environment: ["PGPASSWORD": "EnvSecret"])
        #expect(!info.display.contains(secret))
        #expect(info.display.contains("alice") || info.display.contains("db.example.org"))
        let message = info.redact("failed for \(conninfo) with \(secret) and EnvSecret")
        #expect(!message.contains(secret) && !message.contains("EnvSecret"), "\(message)")
    }

    @Test("a connection string that does not parse is one line without its password", .enabled(if: hasLibpq, "libpq.so.5 is not installed"))
    func badConnectionString() throws {
        #expect {
            try ConnectionInfo("postgresql://alice:Pa55word@host/db?nosuchoption=1")
        } throws: { error in
            let text = "\(error)"
            return !text.contains("Pa55word") && !text.contains("\n") && text.hasPrefix("connection string:")
        }
    }
}
