import ArchivistBase
import Foundation

/// The typed view of one Article Search document, read tolerantly from every schema the API has
/// used (2013–2016, the 2018 transition, 2019, and the 2025 schema).
///
/// Only a document that is not an object, or that has no `_id` string, is refused. Everything else
/// is optional: a member that is missing, `null`, of the wrong type (a number where a string is
/// expected, `byline: []`) or unreadable (`word_count: "n/a"`) leaves its property nil or empty.
/// Strings that are empty or white space only also read as nil, so `"kicker": ""` (2025) and
/// `"kicker": null` (2019) mean the same.
///
/// The typed view is for display and filtering only: the store keeps the raw document as received
/// (see ``SearchResponse/documents``), never a re-encoding of this model.
public struct Article: Sendable, Equatable {
    /// `_id`: 24 hex digits (to 2018) or `nyt://article/<uuid>` (2019 on).
    public var id: String
    /// `uri` (`nyt://article/<uuid>`), from the 2018 transition on.
    public var uri: String?
    /// `web_url`.
    public var webURL: String?
    /// `headline.main`.
    public var headline: String?
    /// `headline.kicker`.
    public var kicker: String?
    /// `headline.print_headline`.
    public var printHeadline: String?
    /// `byline.original` (`By HUGO DIXON and LAUREN SILVA`).
    public var byline: String?
    /// `pub_date`, read as the store's `ISODate` reads dates (any offset, none, or a bare day).
    ///
    /// A `pub_date` that is present but not a date is nil rather than an error: the document is
    /// still worth storing (the raw text stays in the stored document), and one odd date should
    /// not cost the whole page.
    public var pubDate: Date?
    /// `word_count`, given as a number or (2016) as a string of digits.
    public var wordCount: Int?
    /// `snippet`.
    public var snippet: String?
    /// `abstract`.
    public var abstract: String?
    /// `lead_paragraph`.
    public var leadParagraph: String?
    /// `source` (`The New York Times`, `AP`, `Reuters`).
    public var source: String?
    /// `section_name`.
    public var sectionName: String?
    /// `subsection_name`, or the misspelled `subsectoinName` of some 2019 documents.
    public var subsectionName: String?
    /// `news_desk`.
    public var newsDesk: String?
    /// `type_of_material` (`News`, `Op-Ed`, `Letter`, `Blog`, ...).
    public var typeOfMaterial: String?
    /// `document_type` (`article`, `multimedia`, `blogpost`).
    public var documentType: String?
    /// `keywords`, in the document's order; entries without a `value` string are left out.
    public var keywords: [Keyword]
    /// The images of `multimedia`, in the document's order: each crop of the list schema
    /// (2013–2024), or the `default` and `thumbnail` images of the 2025 object. Images without a
    /// URL (the 2025 placeholders with `"url": ""`) are left out.
    public var multimedia: [Media]

    /// An article with only an ID; every other property is nil or empty.
    public init(id: String) {
        self.id = id
        keywords = []
        multimedia = []
    }

    /// Reads a document; `path` names it in errors (`response.docs[3]`).
    ///
    /// - Throws: ``ClientError/unexpectedShape(path:reason:)`` when the document is not an
    ///   object, ``ClientError/missingID(path:)`` when it has no `_id` string (or an empty one).
    public init(document: JSONValue, path: String) throws(ClientError) {
        guard case .object = document else {
            throw .unexpectedShape(path: path, reason: "expected a document (object), found \(document.typeName)")
        }
        guard case .string(let id)? = document["_id"], !id.isEmpty else { throw .missingID(path: path) }
        self.init(id: id)
        applyFieldMappings(from: document)
    }

    /// The first image of `multimedia` in the document's order (the largest crop in the list
    /// schema, the `default` image in 2025), if any.
    public var leadImage: Media? { multimedia.first }
}

extension Article: JSONMappable {
    /// Where each property comes from. `id` is read by `init(document:path:)`, which refuses
    /// documents without one.
    static let fieldMappings: [JSONFieldMapping<Article>] = [
        .map(\.uri, from: "uri", using: .text),
        .map(\.webURL, from: "web_url", using: .text),
        .map(\.headline, from: "headline.main", using: .text),
        .map(\.kicker, from: "headline.kicker", using: .text),
        .map(\.printHeadline, from: "headline.print_headline", using: .text),
        .map(\.byline, from: "byline.original", using: .text),
        .map(\.pubDate, from: "pub_date", using: .date),
        .map(\.wordCount, from: "word_count", using: .integer),
        .map(\.snippet, from: "snippet", using: .text),
        .map(\.abstract, from: "abstract", using: .text),
        .map(\.leadParagraph, from: "lead_paragraph", using: .text),
        .map(\.source, from: "source", using: .text),
        .map(\.sectionName, from: "section_name", using: .text),
        .map(\.subsectionName, from: "subsection_name", "subsectoinName", using: .text),
        .map(\.newsDesk, from: "news_desk", using: .text),
        .map(\.typeOfMaterial, from: "type_of_material", using: .text),
        .map(\.documentType, from: "document_type", using: .text),
        .map(\.keywords, from: "keywords", using: .list(of: .keyword)),
        .map(\.multimedia, from: "multimedia", using: .multimedia),
    ]
}

/// One entry of a document's `keywords`.
public struct Keyword: Sendable, Equatable {
    /// `name`: the kind of keyword (`subject`, `persons`, `glocations`, `organizations`,
    /// `creative_works`; capitalized in 2025: `Subject`, `Person`, `Location`). Empty when absent.
    public var name: String
    /// `value` (`Subprime Mortgage Crisis`, `Obama, Barack`).
    public var value: String
    /// `rank`, given as a number or (2016) as a string of digits.
    public var rank: Int?
    /// Whether the keyword is a major one: `is_major` (2016) or `major` (2018–2019), `"Y"` or
    /// `"N"`; nil when absent or `null` (as in most 2019 entries, and always in 2025).
    public var isMajor: Bool?

    /// A keyword from its members.
    public init(name: String, value: String, rank: Int? = nil, isMajor: Bool? = nil) {
        self.name = name
        self.value = value
        self.rank = rank
        self.isMajor = isMajor
    }
}

extension Keyword: JSONMappable {
    /// Where each optional property comes from; `name` and `value` are read by `.keyword`.
    static let fieldMappings: [JSONFieldMapping<Keyword>] = [
        .map(\.rank, from: "rank", using: .integer),
        .map(\.isMajor, from: "is_major", "major", using: .flag),
    ]
}

/// One image of a document's `multimedia`.
public struct Media: Sendable, Equatable {
    /// `url` as given: relative to `https://static01.nyt.com/` (`images/2018/10/25/...jpg`) in the
    /// list schema, absolute in 2025. See ``absoluteURL``.
    public var url: String
    /// `width` in pixels, given as a number or a string of digits.
    public var width: Int?
    /// `height` in pixels, given as a number or a string of digits.
    public var height: Int?
    /// The kind of image: `subtype` (or `subType`) in the list schema (`xlarge`, `wide`,
    /// `thumbnail`), the member name in 2025 (`default`, `thumbnail`).
    public var subtype: String?
    /// `crop_name` (`articleLarge`, `thumbWide`, `thumbStandard`), from the 2018 transition to 2024.
    public var cropName: String?
    /// `caption` (in 2025, the caption shared by the images of the object).
    public var caption: String?
    /// `credit` (in 2025, the credit shared by the images of the object).
    public var credit: String?

    /// An image from its members.
    public init(
        url: String, width: Int? = nil, height: Int? = nil, subtype: String? = nil, cropName: String? = nil,
        caption: String? = nil, credit: String? = nil
    ) {
        self.url = url
        self.width = width
        self.height = height
        self.subtype = subtype
        self.cropName = cropName
        self.caption = caption
        self.credit = credit
    }

    /// The URL to fetch the image from: `url` when it is absolute, otherwise `url` below
    /// `https://static01.nyt.com/`.
    public var absoluteURL: String {
        if url.hasPrefix("https://") || url.hasPrefix("http://") { return url }
        return Media.imageHost + (url.hasPrefix("/") ? String(url.dropFirst()) : url)
    }

    /// Where relative image URLs point.
    static let imageHost = "https://static01.nyt.com/"
}

extension Media: JSONMappable {
    /// Where each optional property comes from; `url` is read by `.media`.
    static let fieldMappings: [JSONFieldMapping<Media>] = [
        .map(\.width, from: "width", using: .integer),
        .map(\.height, from: "height", using: .integer),
        .map(\.subtype, from: "subtype", "subType", using: .text),
        .map(\.cropName, from: "crop_name", using: .text),
        .map(\.caption, from: "caption", using: .text),
        .map(\.credit, from: "credit", using: .text),
    ]
}

extension JSONTransformer where Value == Keyword {
    /// A keyword object with a non-empty `value` string; `name` defaults to empty.
    static var keyword: JSONTransformer {
        .mapped { json in
            guard let value = JSONTransformer<String>.text(json["value"] ?? .null) else { return nil }
            return Keyword(name: JSONTransformer<String>.text(json["name"] ?? .null) ?? "", value: value)
        }
    }
}

extension JSONTransformer where Value == Media {
    /// An image object with a non-empty `url` string.
    static var media: JSONTransformer {
        .mapped { json in
            guard let url = JSONTransformer<String>.text(json["url"] ?? .null) else { return nil }
            return Media(url: url)
        }
    }
}

extension JSONTransformer where Value == [Media] {
    /// `multimedia` in either schema: a list of crops (2013–2024), or the 2025 object
    /// `{"caption", "credit", "default": {url, height, width}, "thumbnail": {...}}`, whose image
    /// members become one ``Media`` each (subtype = member name, caption and credit shared).
    /// `null` and other types give nil (the article keeps an empty list).
    static var multimedia: JSONTransformer {
        JSONTransformer { json in
            switch json {
            case .array:
                return JSONTransformer.list(of: .media)(json)
            case .object(let members):
                let caption = JSONTransformer<String>.text(json["caption"] ?? .null)
                let credit = JSONTransformer<String>.text(json["credit"] ?? .null)
                var images: [Media] = []
                // Members are in key order, so `default` comes before `thumbnail`.
                for member in members where member.value.isObject {
                    guard var image = JSONTransformer<Media>.media(member.value) else { continue }
                    image.subtype = image.subtype ?? member.key
                    image.caption = image.caption ?? caption
                    image.credit = image.credit ?? credit
                    images.append(image)
                }
                return images
            default:
                return nil
            }
        }
    }
}
