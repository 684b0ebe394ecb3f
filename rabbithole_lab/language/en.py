"""English: the words the reasoning reads questions and statute text by (regular-expression fragments, matched
case-insensitively unless a comment says otherwise)."""

INTERROGATIVES = ["what", "which", "how", "when", "who", "whom", "whose", "whether", "where", "why"]
PREPOSITIONS = ["by", "under", "in", "to", "for", "from", "with", "at"]
CONJUNCTIONS = ["and", "or"]
# a question's opening clause that starts so states the case the question is about, it does not ask ("When a
# firm has to keep its list up to date, what …", "For a composite firm …, what statement …"); "when" and "where"
# ask when a verb follows them ("When must the operator report …")
_AUXILIARIES = (r"(?:is|are|was|were|do|does|did|must|should|shall|can|could|may|might|will|would|has|have|had|"
                r"need|needs)\b")
CASE_OPENINGS = ["if", "unless", "once", "whenever", "for", "in", "under", "during", "after", "before",
                 rf"(?:when|where)(?!\s+{_AUXILIARIES})"]

QUESTION_STOP_WORDS = {
    "which", "what", "apply", "applies", "does", "do", "must", "should", "there", "their", "about", "under",
    "into", "when", "where", "whom", "whose", "have", "has", "are", "is", "the", "for", "with", "from",
    "that", "this", "these", "those", "please", "according", "regarding", "specific", "how", "many",
    "much", "and", "can", "may", "any", "all", "given", "stated"}

# words of a researcher's reply that carry no aspect of their own ("I mean …", "please also include …"), beside
# the function words every English text has (bm25s's English stop words)
DIALOGUE_FILLER_WORDS = {
    "mean", "meant", "means", "defined", "define", "include", "including", "also", "mention", "list", "cover",
    "consider", "please", "interested", "important", "question", "answer", "really", "rather", "already",
    "just", "yes", "want", "would", "like", "about", "case", "cases", "were", "was", "been", "being",
    # what a reply asks the assistant to do ("please also give the organ doses"): a request, not a subject
    "give", "tell", "show", "explain", "describe", "add", "need", "know", "find", "see", "look", "provide"}


def is_term_word(word: str) -> bool:
    """A word that can name a subject: an English adverb ("occupationally", "currently") or a past form of a
    verb ("applied", "defined") names none."""
    lower = word.lower()
    verb_or_adverb = lower.endswith("ly") or (lower.endswith("ed") and len(lower) > 4)
    return not verb_or_adverb or any(char.isdigit() for char in word)


_TIME_NOUNS = r"(?:time|seconds|minutes|hours|days|weeks|months|years|calendar\s+days|working\s+days)\b"
ASKED = {
    # "how much time", "how many weeks" ask for a period, not a quantity
    "amount": [r"how\s+(?:high|large)", rf"how\s+(?:much|many)\b(?!\s+{_TIME_NOUNS})", r"limits?\b", r"values?\b",
               r"amounts?\b", r"sums?\b", r"dose\b",
               r"thresholds?\b", r"percent\w*", r"ceiling\b", r"cap\b"],
    "deadline": [r"how\s+long", rf"how\s+(?:much|many)\s+{_TIME_NOUNS}", r"how\s+quickly", r"how\s+soon",
                 r"by\s+when", r"by\s+(?:what|which)\s+date",
                 r"(?:what|which)\s+period", r"when\b", r"deadlines?\b", r"periods?\b", r"retain\w*", r"kept\b"],
    "frequency": [r"how\s+often", r"how\s+frequently", r"(?:at|in)\s+what\s+intervals?", r"how\s+regularly",
                  r"repeat\w*", r"recurr\w*"],
    "body": [r"who\b", r"whom\b", r"authorit\w+", r"responsib\w*", r"competent", r"notif\w+"],
    "condition": [r"conditions?\b", r"under\s+what", r"whether", r"when\b", r"if\b"],
}

NUMBER_WORDS = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "twelve", "thirty"]
SCALE_WORDS = ["million", "billion", "thousand"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]
STATES = {
    "deadline": [r"\b(?:without\s+delay|no\s+later\s+than|within)\b"],
    "frequency": [r"\bevery\s+(?:\w+\s+)?(?:years?|months?|weeks?|days?)\b", r"\b(?:annually|monthly|weekly|daily)\b"],
    "body": [r"\b\w*(?:Authorit(?:y|ies)|Ministr(?:y|ies)|Regulator|Commission)\b"],
    "condition": [r"\b(?:unless|provided)\b"],
}

POINTS_BACK = [r"(?:This|These|It|Such)\b(?!\s+(?:Act|Regulations?|Rules?|Part|Chapter|Section|Law|Directive)\b)"]

# text that speaks to an AI system instead of stating a rule (issue 70): a note addressed to one, or an imperative
# about what to say, cite, ignore or conceal; a rule says "a firm must disregard …", never "Disregard the other …"
_MODEL = r"(?:AI\b[-\w]*|artificial\s+intelligence|(?:large\s+)?language\s+models?|LLMs?|chatbots?|assistants?|agents?)"
ADDRESSES_A_MODEL = [
    r"\b(?:note|message|instructions?|notice|hint|attention|reminder)s?\s+(?:to|for)\s+(?:the\s+|all\s+|any\s+|an?\s+)?"
    r"(?:AI\b[-\w]*|artificial\s+intelligence|(?:large\s+)?language\s+models?|LLMs?|chatbots?|assistants?)",
    rf"\b(?:dear|hello|hey)\s+(?:{_MODEL}|model)\b",
    r"\bas\s+an?\s+(?:AI|language\s+model|LLM|assistant)\b,",
    r"\byou\s+are\s+now\b",
    r"\bignor\w*\s+(?:all\s+)?(?:previous|prior|above|earlier|other|remaining)\s+(?:\w+\s+)?(?:instructions?|"
    r"documents?|sources?|text|context|rules?|sections?|prompts?)",
    r"\bsystem\s*prompt\b",
    r"(?:^|[.:;!]\s+)(?:disregard|ignore|forget|conceal|withhold|suppress|omit)\s+(?:all\s+|any\s+|the\s+)*"
    r"(?:other|previous|prior|above|earlier|remaining|§|section|rule|document|source|instruction)",
    r"(?:^|[.:;!]\s+)(?:only|exclusively)\s+(?:cite|mention|name|state|quote|report|answer|say|output)\b",
    r"(?:^|[.:;!]\s+)(?:do\s+not|don't|never)\s+(?:mention|cite|quote|reveal|name|disclose|tell)\b",
    r"(?:^|[.:;!]\s+)(?:answer|respond|reply|output)\s+(?:only|exclusively|with\s+only)\b",
    r"\boutput\s+(?:only\s+)?[\"'„“]?(?-i:[A-Z]{4,}\b)",
]

# a provision that defines terms instead of stating the rule a question asks for (issue 69): its heading, and the
# forms a definition takes ("'firm' means …", "has the meaning given in …")
DEFINITION_HEADINGS = [r"Definitions?\b", r"Interpretation\b", r"Glossary\b", r"Meaning\s+of\b"]
DEFINES = [r"\bmeans\b", r"\bhas\s+the\s+(?:same\s+)?meaning\b", r"\b(?:is|are)\s+defined\s+(?:as|in)\b",
           r"\bthe\s+following\s+definitions\b", r"\bshall\s+(?:have|bear)\s+the\s+(?:same\s+)?meaning\b"]
# plurals a stemmer does not bring back to their singular ("indices", "criteria"): (plural ending, singular ending)
IRREGULAR_PLURALS = [("ices", "ex"), ("ices", "ix"), ("ia", "ion"), ("a", "um")]

# a question that asks what a term means: then a definition answers it
ASKS_DEFINITION = [r"\bwhat\s+(?:is|are)\s+an?\s+\w+(?:\s+\w+)?\s*\?", r"\bwhat\s+is\s+meant\s+by\b",
                   r"\bwhat\s+does\s+.{1,60}?\s+mean\b", r"\bhow\s+(?:is|are)\s+.{1,60}?\s+defined\b",
                   r"\bdefinitions?\b", r"\bdefined\b", r"\bmeaning\s+of\b"]

# how a rulebook marks a provision it no longer has: "sections 14 to 16 (repealed)", "Rule 4.2 [deleted]"
REPEALED_MARKS = ["repealed", "deleted", "revoked", "omitted"]
EDITORIAL_NOTES: list[str] = []  # none known in English rulebooks' text
RANGE_WORDS = ["to", "and"]

# ---- how sentences are read (reasoning/text.py) ----
ABBREVIATIONS = ["No", "Sec", r"e\.g", r"i\.e", "cf"]
VALUE_WORDS: list[str] = []
ORDINAL_LEADS: list[str] = []  # English writes ordinals without a period
AUTHORISES_REGULATION: list[str] = []
GOVERNS_PREPOSITIONS: list[str] = []
GOVERNS_OPENERS: list[str] = []
ASKS_ABOUT_AUTHORISATION = ["empower", r"authori[sz]"]
DUTY = ["shall", "must", r"is\s+required", r"may\s+not", r"are\s+required"]
DEFINITION_OPENERS = ["means", r"is\s+defined\s+as"]

# ---- how a researcher's reply is read (reasoning/dialogue_terms.py) ----
CLAUSE_CONJUNCTIONS = ["and", "or", "but"]
NEGATIONS = ["without", "not", "no", "except", "excluding", r"other\s+than", r"leave\s+out(?:\s+anything\s+about)?"]
RESTRICTIONS = ["only", "solely", "just"]
CASE_PREPOSITIONS = ["about", "for", "to", "on"]
LEADING_WORDS = ["the", "a", "an"]
CASE_AFTER = ["for", "about", "on"]

# ---- where a question divides into parts (kb/retrieval/query.py) ----
CLAUSE_OPENERS = ["which", "what", "how", "who", "when", "where", "whether", "is", "are", "does", "do", "must", "can"]
PART_OPENERS = ["which", "what", "how", "who", "when", "where", "whether", "is", "are", "does", "do", "must"]
PART_CONJUNCTION = "and"
COMMA_LEAD = ""

# ---- what a reference does (rabbithole/reference_types.py) ----
ANNEX_UNITS = ["annex", "annexes", "appendix", "appendices", "schedule", "schedules"]
NOTE_UNITS = ["footnote", "footnotes"]
DELEGATES_BEFORE = (r"(?:rules|regulations|orders|an\s+order|directions|requirements|instruments?)\s+(?:made|"
                    r"issued|given)\s+(?:under|pursuant\s+to)\s*$|(?:powers?|power\s+conferred)\s+(?:under|by)\s*$")
APPLIES_IN_CLAUSE = (r"\b(?:applies|apply|shall\s+apply|is\s+to\s+apply)\b(?:\s+\S+){0,4}?\s+"
                     r"(?:correspondingly|mutatis\s+mutandis|with\s+(?:the\s+)?(?:necessary\s+)?modifications)\b")

# ---- how documents are read at ingest (kb/ingest/parse.py, sections.py) ----
PAGE_WORDS = ["Page"]
PAGE_OF_WORDS = ["of"]
STRUCTURAL_HEADINGS = ["Part", "Chapter"]
BODY_STARTERS: list[str] = []
DEFINED_IN_THE_SENSE = ""

# ---- how a document names its parts (kb/ingest/sections.py, the resolver, the reader) ----
HEADING_UNITS = ["Annex", "ANNEX", "Appendix", "Schedule"]
LABEL_UNITS: list[str] = []
QUOTED_SECTION_UNITS = ["Annex", "[Ss]ection", "[Rr]ule"]
LEGAL_SECTION_UNITS: list[str] = []
# "4.1 (Chapter 4 Key Functions)", "Article 277(3) Mapping of Transactions", "Footnote 53 (Chapter 6 …)", "Table 1"
NUMBERED_BLOCK_UNITS = ["Article", "Footnote", "Table", "Annex", "Appendix", "Title", "Chapter"]
OUTLINE_UNITS = ["Part", "Chapter", "Schedule", "Section"]  # "Part 6.Chapter 1.70.(1)": the rule is 70(1)
GROUPING_UNITS = ["Part", "Chapter", "Schedule"]  # a unit that groups rules ("Chapter 3"), no rule itself
PATH_BLOCK_UNITS = ["Chapter", "Table", "Box", "Figure", "Annex", "Appendix"]  # "Chapter 2 … > (d) Timelines"
PATH_TOP_UNITS = ["Chapter", "Appendix", "Annex"]  # "2.25 (Chapter 2 Key … > (d) Timelines)"
CAPTION_LABELS = ["Table", "Annex", "Part"]
BIBLIOGRAPHY_HEADINGS = ["References", "Bibliography", "Literature"]
PUBLICATION_WORDS = ["Publication", r"Pub\.", r"Safety\s+Standards?\s+Series\s+No\.", r"GSR\s+Part"]

# ---- how documents are named (kb/store/registry.py) ----
NO_TITLE_WORDS = ["untitled"]
NAME_ARTICLES = ["the", "of"]
INFLECTION_ENDINGS: list[str] = []
GENERIC_ACT_WORDS = ["act", "law", "regulation", "regulations", "directive", "rules", "rulebook", "code", "ordinance",
                     "guidance", "standard"]
ACT_TYPE_ENDINGS: list[str] = []  # English first words ("Financial …") are only modifiers, never a name alone
OCR_MISREADS: list[tuple[str, str]] = []
OCR_HEADING_MISREADS: list[tuple[str, str]] = []  # "$ 12" on an English page is an amount
TESSERACT_CODE = "eng"  # Tesseract's model for English (Debian package tesseract-ocr-eng)

# how the lexical search reads English: Snowball's stemmer, bm25s's stop words, no compounds to split
SNOWBALL_STEMMER = "english"
STOP_WORDS = "STOPWORDS_EN"  # bm25s.stopwords' list
SPLITS_COMPOUNDS = False
