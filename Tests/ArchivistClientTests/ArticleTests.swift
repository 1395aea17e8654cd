import ArchivistBase
import ArchivistStore
import ArchivistTestSupport
import Foundation
import Testing

@testable import ArchivistClient

@Suite struct ArticleTests {
    @Test func readsEveryFieldOfA2016Document() throws {
        let a = try article(
            """
            {"_id":"57a0cb0e38f0d8762aab67f1","web_url":"http:\\/\\/www.nytimes.com\\/2016\\/08\\/12\\/opinion\\/slow-to-show.html",
             "snippet":"S","lead_paragraph":"L","abstract":"A","source":"The New York Times","print_page":"4",
             "headline":{"main":"Slow to Show","kicker":"Op-Docs","print_headline":"Slow"},
             "byline":{"person":[],"original":"By JOHN DOE"},"pub_date":"2016-08-12T00:00:00Z","word_count":"282",
             "section_name":"Opinion","subsection_name":"Sunday Review","news_desk":"OpEd","type_of_material":"Op-Ed",
             "document_type":"article","keywords":[{"rank":"1","is_major":"Y","name":"glocations","value":"Odessa (Tex)"}],
             "multimedia":[{"width":190,"url":"images\\/2016\\/08\\/12\\/x-thumbWide.jpg","height":"126","subtype":"wide","type":"image"}],
             "blog":[],"slideshow_credits":null}
            """)
        var expected = Article(id: "57a0cb0e38f0d8762aab67f1")
        expected.webURL = "http://www.nytimes.com/2016/08/12/opinion/slow-to-show.html"
        expected.snippet = "S"
        expected.leadParagraph = "L"
        expected.abstract = "A"
        expected.source = "The New York Times"
        expected.headline = "Slow to Show"
        expected.kicker = "Op-Docs"
        expected.printHeadline = "Slow"
        expected.byline = "By JOHN DOE"
        expected.pubDate = utc(2016, 8, 12)
        expected.wordCount = 282
        expected.sectionName = "Opinion"
        expected.subsectionName = "Sunday Review"
        expected.newsDesk = "OpEd"
        expected.typeOfMaterial = "Op-Ed"
        expected.documentType = "article"
        expected.keywords = [Keyword(name: "glocations", value: "Odessa (Tex)", rank: 1, isMajor: true)]
        expected.multimedia = [Media(url: "images/2016/08/12/x-thumbWide.jpg", width: 190, height: 126, subtype: "wide")]
        #expect(a == expected)
    }

    @Test func anIDAloneIsEnoughAndEverythingElseIsEmpty() throws {
        let a = try article(#"{"_id":"nyt://article/9c3f6e2a-1b4d-5e8f-a7c6-2d1e0f9b8a7c"}"#)
        #expect(a == Article(id: "nyt://article/9c3f6e2a-1b4d-5e8f-a7c6-2d1e0f9b8a7c"))
        #expect(a.leadImage == nil)
    }

    @Test func nullEverywhereDecodesToNilAndEmpty() throws {
        let a = try article(
            """
            {"_id":"583032447c459f6a5fcceedd","uri":null,"web_url":null,"snippet":null,"lead_paragraph":null,"abstract":null,
             "source":null,"headline":null,"byline":null,"pub_date":null,"word_count":null,"section_name":null,
             "subsection_name":null,"subsectoinName":null,"news_desk":null,"type_of_material":null,"document_type":null,
             "keywords":null,"multimedia":null}
            """)
        #expect(a == Article(id: "583032447c459f6a5fcceedd"))
        let nested = try article(
            """
            {"_id":"x","headline":{"main":null,"kicker":null,"print_headline":null},"byline":{"original":null},
             "keywords":[null,{"name":null,"value":null,"rank":null,"major":null}],"multimedia":[null,{"url":null}]}
            """)
        #expect(nested == Article(id: "x"))
    }

    @Test func wrongTypesWhereAStringIsExpectedReadAsNil() throws {
        let a = try article(
            """
            {"_id":"x","headline":{"main":42,"kicker":true,"print_headline":["a"]},"byline":"By SOMEONE","web_url":{},
             "word_count":"n/a","pub_date":1479553594,"section_name":7,"keywords":{"name":"subject","value":"v"},
             "multimedia":"images/x.jpg","document_type":[]}
            """)
        #expect(a == Article(id: "x"))
    }

    @Test func anUnparseablePubDateIsNilAndTheDocumentIsKept() throws {
        let a = try article(#"{"_id":"x","pub_date":"xyz","headline":{"main":"Still Here"}}"#)
        #expect(a.pubDate == nil)
        #expect(a.headline == "Still Here")
    }

    @Test(arguments: [
        (#"{"original":"By HUGO DIXON","person":[]}"#, "By HUGO DIXON" as String?),
        ("[]", nil),
        ("null", nil),
        (#"{"person":[],"organization":"REUTERS"}"#, nil),
        (#"{"original":""}"#, nil),
        (#""By HUGO DIXON""#, nil),
    ])
    func bylineComesFromItsOriginalWhateverShapeItHas(byline: String, expected: String?) throws {
        #expect(try article(#"{"_id":"x","byline":"# + byline + "}").byline == expected)
    }

    @Test(arguments: [
        (#""subsection_name":"Africa""#, "Africa" as String?),
        (#""subsectoinName":"Economy""#, "Economy"),
        (#""subsection_name":null,"subsectoinName":"Economy""#, "Economy"),
        (#""subsection_name":"","subsectoinName":"Economy""#, "Economy"),
        (#""subsection_name":"Africa","subsectoinName":"Economy""#, "Africa"),
        (#""subsection_name":"""#, nil),
        (#""subsection_name":null"#, nil),
    ])
    func subsectionFallsBackToTheMisspelledKey(members: String, expected: String?) throws {
        #expect(try article(#"{"_id":"x","# + members + "}").subsectionName == expected)
    }

    @Test(arguments: [
        (#"{"name":"subject","value":"V","rank":"3","is_major":"N"}"#, Keyword(name: "subject", value: "V", rank: 3, isMajor: false)),
        (#"{"name":"subject","value":"V","rank":"1","is_major":"Y"}"#, Keyword(name: "subject", value: "V", rank: 1, isMajor: true)),
        (#"{"name":"subject","value":"V","rank":2,"major":"N"}"#, Keyword(name: "subject", value: "V", rank: 2, isMajor: false)),
        (#"{"name":"subject","value":"V","rank":2,"major":"Y"}"#, Keyword(name: "subject", value: "V", rank: 2, isMajor: true)),
        (#"{"name":"subject","value":"V","rank":1,"major":null}"#, Keyword(name: "subject", value: "V", rank: 1)),
        (#"{"name":"Subject","value":"V","rank":1}"#, Keyword(name: "Subject", value: "V", rank: 1)),
        (#"{"name":"subject","value":"V"}"#, Keyword(name: "subject", value: "V")),
        (#"{"value":"V","rank":"first"}"#, Keyword(name: "", value: "V")),
    ])
    func keywordRankAndMajorAreReadFromEverySchema(entry: String, expected: Keyword) throws {
        #expect(try article(#"{"_id":"x","keywords":["# + entry + "]}").keywords == [expected])
    }

    @Test func keywordsWithoutAValueAreLeftOut() throws {
        let a = try article(
            #"{"_id":"x","keywords":[{"name":"subject"},{"name":"subject","value":""},"text",{"name":"subject","value":"Kept"}]}"#)
        #expect(a.keywords == [Keyword(name: "subject", value: "Kept")])
    }

    @Test func multimediaListGivesOneImagePerCrop() throws {
        let a = try article(
            """
            {"_id":"x","multimedia":[
              {"rank":0,"subtype":"xlarge","caption":null,"credit":null,"type":"image","url":"images/a-articleLarge.jpg",
               "height":400,"width":600,"legacy":{},"subType":"xlarge","crop_name":"articleLarge"},
              {"rank":0,"subType":"wide","type":"image","url":"images/a-thumbWide.jpg","height":126,"width":190,"crop_name":null},
              {"type":"image","url":""},
              {"type":"image"}]}
            """)
        #expect(
            a.multimedia == [
                Media(url: "images/a-articleLarge.jpg", width: 600, height: 400, subtype: "xlarge", cropName: "articleLarge"),
                Media(url: "images/a-thumbWide.jpg", width: 190, height: 126, subtype: "wide"),
            ])
        #expect(a.leadImage?.absoluteURL == "https://static01.nyt.com/images/a-articleLarge.jpg")
    }

    @Test func multimediaObjectOf2025GivesTheDefaultAndThumbnailImages() throws {
        let a = try article(
            """
            {"_id":"x","multimedia":{"caption":"The court.","credit":"Kenny Holston/The New York Times",
              "default":{"url":"https://static01.nyt.com/images/d.jpg","height":400,"width":600},
              "thumbnail":{"url":"https://static01.nyt.com/images/t.jpg","height":75,"width":75}}}
            """)
        #expect(
            a.multimedia == [
                Media(
                    url: "https://static01.nyt.com/images/d.jpg", width: 600, height: 400, subtype: "default",
                    caption: "The court.", credit: "Kenny Holston/The New York Times"),
                Media(
                    url: "https://static01.nyt.com/images/t.jpg", width: 75, height: 75, subtype: "thumbnail",
                    caption: "The court.", credit: "Kenny Holston/The New York Times"),
            ])
        #expect(a.leadImage?.absoluteURL == "https://static01.nyt.com/images/d.jpg")
        let placeholder = try article(#"{"_id":"x","multimedia":{"caption":"","credit":"","default":{"url":""},"thumbnail":{"url":""}}}"#)
        #expect(placeholder.multimedia.isEmpty)
    }

    @Test(arguments: ["[]", #""text""#, "null", "12", "true"])
    func aDocumentThatIsNotAnObjectIsAnErrorNamingItsPath(document: String) throws {
        let value = try json(document)
        #expect(
            throws: ClientError.unexpectedShape(path: "response.docs[3]", reason: "expected a document (object), found \(value.typeName)")
        ) {
            try Article(document: value, path: "response.docs[3]")
        }
    }

    @Test(arguments: [#"{}"#, #"{"_id":null}"#, #"{"_id":""}"#, #"{"_id":42}"#, #"{"_id":{"$oid":"x"}}"#, #"{"uri":"nyt://article/x"}"#])
    func aDocumentWithoutAnIDStringIsMissingID(document: String) throws {
        let value = try json(document)
        #expect(throws: ClientError.missingID(path: "response.docs[4]")) {
            try Article(document: value, path: "response.docs[4]")
        }
    }

    @Test(arguments: ["583032447c459f6a5fcceedd", "nyt://article/9c3f6e2a-1b4d-5e8f-a7c6-2d1e0f9b8a7c", "nyt://interactive/abc"])
    func idIsTakenAsGiven(id: String) throws {
        #expect(try article(#"{"_id":"\#(id)"}"#).id == id)
    }

    @Test func everyGeneratedShapeDecodes() throws {
        var generator = ArticleGenerator(seed: 20_250_410)
        let documents = generator.documents(600)
        let body = JSONWriter.compactBytes(generator.apiResponse(docs: documents, offset: 30))
        let response = try SearchResponse(body: body, source: "generated")
        #expect(response.documents == documents)
        #expect(response.offset == 30)
        #expect(response.hits >= 630)
        var hexIDs = 0, uriIDs = 0, imageObjects = 0, imageLists = 0
        for (article, document) in zip(response.articles, documents) {
            #expect(article.id == document["_id"]?.stringValue)
            #expect(article.pubDate != nil, "\(article.id)")
            #expect(article.wordCount != nil, "\(article.id)")
            #expect(article.headline != nil, "\(article.id)")
            #expect(article.sectionName != nil, "\(article.id)")
            #expect(!article.keywords.isEmpty || document["keywords"] == .array([]), "\(article.id)")
            if article.id.hasPrefix("nyt://article/") { uriIDs += 1 } else { hexIDs += 1 }
            if case .object? = document["multimedia"] { imageObjects += 1 }
            if case .array(let images)? = document["multimedia"], !images.isEmpty {
                imageLists += 1
                #expect(article.multimedia.count == images.count, "\(article.id)")
            }
            if let subsection = document["subsectoinName"]?.stringValue {
                #expect(article.subsectionName == subsection)
            }
        }
        // All three shapes were generated: 24-hex IDs (2016, some 2019), nyt:// IDs, 2025 image objects.
        #expect(hexIDs > 0 && uriIDs > 0 && imageObjects > 0 && imageLists > 0)
    }
}
