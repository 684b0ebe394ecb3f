"""German: the words the reasoning reads questions and statute text by (regular-expression fragments, matched
case-insensitively unless a comment says otherwise)."""

# interrogatives that open a question part ("welche", "bis wann"), and what may stand before them
INTERROGATIVES = [r"welche[rsmn]?", "wie", "wann", "wer", "wem", "wen", "was", "wo", r"wor\w+", "wozu", "wofür",
                  "womit", "wodurch", "warum", "weshalb", "ob"]
PREPOSITIONS = ["bis", "nach", "unter", "in", "an", "bei", "für", "mit", "durch", "von", "aus", "zu", "ab", "seit"]
CONJUNCTIONS = ["und", "oder"]
# a question's opening clause that starts so states the case the question is about, it does not ask ("Wenn eine
# Anlage stillgelegt ist, welche …", "Bei einem Antrag auf …, wie lange …")
CASE_OPENINGS = ["wenn", "falls", "sofern", "soweit", "sobald", "solange", "nachdem", "bei", "für", "im", "in"]

# words of a question that say nothing about its subject
QUESTION_STOP_WORDS = {
    "welche", "welcher", "welches", "gelten", "gilt", "gibt", "geben", "werden", "wird", "können", "kann",
    "müssen", "muss", "dürfen", "darf", "sollen", "soll", "einer", "eines", "einem", "einen", "diese",
    "dieser", "dieses", "über", "unter", "durch", "beim", "wenn", "dann", "wann", "warum", "wofür",
    "welchen", "welchem", "sich", "haben", "hat", "sind", "ist", "bestimmte", "bestimmten", "jeweils",
    "nach", "gemäß", "bitte", "alle", "allen", "mehr", "sowie", "oder", "und", "für", "mit", "von", "aus",
    "beträgt", "betragen", "genau", "insbesondere"}

# words of a researcher's reply that carry no aspect of their own ("Gemeint ist …", "bitte auch … nennen",
# "es geht um …"), beside the function words every German text has (bm25s's German stop words)
DIALOGUE_FILLER_WORDS = {
    "gemeint", "meine", "meinte", "bitte", "auch", "nennen", "angeben", "aufführen", "berücksichtigen", "geht",
    "interessiert", "interessieren", "wichtig", "wurde", "wurden", "worden", "war", "waren", "wäre", "wären",
    "frage", "fragen", "antwort", "genau", "eigentlich", "eher", "bereits", "schon", "noch", "etwa", "ja", "nein"}


def is_term_word(word: str) -> bool:
    """A word that can name a subject: German writes its nouns with a capital letter ("Mitarbeiter",
    "Kategorie"); an adjective or a verb ("vergangenen", "wurde") names none. Figures count ("18")."""
    return word[:1].isupper() or any(char.isdigit() for char in word)


# what a question asks for, by its words: a German compound means what its last part means ("Jahresmenge",
# "Obergrenze", "Deckungssumme" ask for a quantity as "Menge", "Grenze", "Summe" do)
_TIME_NOUNS = r"(?:zeit|sekunden|minuten|stunden|wochen|(?:kalender|werk|arbeits)?tagen?|monaten?|jahren?)\b"
ASKED = {
    # "wie viel Zeit", "wie viele Wochen" ask for a period, not a quantity
    "amount": [r"wie\s+(?:hoch|groß)", rf"wie\s+viel(?:e[mnrs]?)?\b(?!\s+{_TIME_NOUNS})",
               r"\w*(?:werte?|beträge?|betrag|summen?|grenzen?|mengen?|dosis|dosen|anteil)\b",
               r"grenzwert\w*", r"höchstwert\w*", r"höhe\b", r"dosis\w*"],
    "deadline": [r"fristen?\b", r"wie\s+lange", rf"wie\s+viel(?:e[mnrs]?)?\s+{_TIME_NOUNS}", r"bis\s+wann", r"wann\b",
                 r"wie\s+schnell", r"innerhalb\s+welche\w*",
                 r"aufbewahr\w*", r"(?:welche[nm]?|bis\s+zu\s+welche[mnr]?)\s+(?:zeitraum|zeitpunkt|datum|termin|"
                 r"stichtag|tag)\b"],
    "frequency": [r"wie\s+oft", r"wie\s+häufig", r"in\s+welche[nm]\s+(?:abständen|abstand|turnus|intervall\w*)",
                  r"wiederhol\w*"],
    "body": [r"wer\b", r"wem\b", r"an\s+wen", r"welche\s+behörde", r"behörde\w*", r"zuständig\w*", r"melde\w*",
             r"anzeige\w*"],
    "condition": [r"voraussetzung\w*", r"unter\s+welchen", r"in\s+welchen\s+fällen", r"ob\b", r"wann\b"],
}

# what a sentence states, by its words (case-sensitive: a noun is capitalised, "Meldestellen" is an office where
# "sicherzustellen" is a verb); figures with their units come from the unit files
NUMBER_WORDS = ["ein", "zwei", "drei", "vier", "fünf", "sechs", "sieben", "acht", "neun", "zehn", "zwölf",
                "dreißig", "hundert"]
SCALE_WORDS = ["Millionen", "Milliarden", "Tausend"]
MONTHS = ["Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober",
          "November", "Dezember"]
STATES = {
    "deadline": [r"\b(?:unverzüglich|spätestens|binnen|innerhalb\s+von|Frist\w*|bis\s+zum|längstens)\b"],
    "frequency": [r"\b(?:alle[nrs]?|jede[nrs]?)\s+(?:\w+\s+)?(?:Jahre?n?|Monate?n?|Wochen?|Tage?n?|Kalenderjahr\w*)\b",
                  r"\b(?:jährlich|halbjährlich|vierteljährlich|monatlich|wöchentlich|täglich|einmal|zweimal)\b",
                  r"\bin\s+(?:\w+\s+)?(?:Zeit)?[Aa]bständen\b", r"\bIntervall\w*", r"\bturnusmäßig\b"],
    "body": [r"\b\w*(?:[Bb]ehörden?|[Aa]nstalt(?:en)?|[Mm]inisteri(?:ums?|en)|[Kk]ommission(?:en)?)\b",
             r"\b[A-ZÄÖÜ]\w*(?:stellen?|amt|amtes|ämtern?)\b", r"\b(?:Stellen?|Amt|Amtes|Ämtern?)\b"],
    "condition": [r"\b(?:wenn|sofern|soweit|falls|vorausgesetzt|es\s+sei\s+denn)\b"],
}

# a sentence whose first words point back at the sentence before it: its subject ("Sie ist jedoch …") or its
# scope ("Satz 1 gilt nicht für …", "Abweichend von Satz 1 …"); "Diese Verordnung" names the whole text
POINTS_BACK = [r"(?:Die\s+)?(?:Satz|Sätze)\s+\d", r"Dies\b", r"Das\s+gilt\b", r"Sie\b", r"Er\b",
               r"Diese[rsmn]?\b(?!\s+(?:Verordnung|Gesetz\w*|Vorschrift|Abschnitt\w*|Teil\w*|Kapitel\w*|Anlage\w*)\b)",
               r"(?:Hierbei|Dabei|Hierzu|Hiervon|Hierfür|Insoweit)\b",
               r"(?:Abweichend\s+von|Entgegen|Unbeschadet|Nach|Im\s+Fall(?:e)?|In\s+den\s+Fällen)\s+(?:de[rsnm]\s+)?"
               r"(?:Satz|Sätzen?|Satzes)\s+\d"]

# text that speaks to an AI system instead of stating a rule (issue 70): a note addressed to one, or an imperative
# of the second person about what to say, cite, ignore or conceal; a law says "ist zu nennen", never "nenne"
_MODEL = (r"(?:KI\b[-\w]*|künstliche\w*\s+Intelligenz\w*|Sprachmodell\w*|Chatbots?|LLMs?|Assistent(?:en|in)?\b|"
          r"(?:KI-)?Agent(?:en)?\b)")
ADDRESSES_A_MODEL = [
    rf"\b(?:Hinweis|Anweisung|Nachricht|Mitteilung|Botschaft|Befehl|Instruktion)(?:e|en|s)?\s+(?:für|an)\s+"
    rf"(?:alle\s+|die\s+|das\s+|den\s+|jede[ns]?\s+)?{_MODEL}",
    rf"\b(?:Liebe[rs]?|Hallo|Achtung),?\s+{_MODEL}",
    r"\bdu\s+bist\s+(?:jetzt|nun|ab\s+sofort)\b",
    r"\bignorier\w*\s+(?:alle\s+)?(?:vorherigen|bisherigen|früheren|obigen|anderen|übrigen)\b",
    r"(?:^|[.:;!]\s+)(?:verschweige|unterschlage|vergiss|missachte|übergehe|verheimliche)\b",
    r"(?:^|[.:;!]\s+)(?:ignoriere|ignorieren\s+Sie)\s+(?:\w+\s+){0,3}?(?:§|Art\.|Artikel|Dokument|Vorschrift|"
    r"Quelle|Anweisung|Text|Abschnitt|Anlage)",
    r"(?:^|[.:;!]\s+)(?:nenne|zitiere|erwähne|antworte|gib|schreibe|sage|behaupte)\s+(?:\w+\s+){0,3}?"
    r"(?:ausschließlich|nur|niemals|nie|nicht|keine[nrsm]?)\b",
    r"\b(?:nennen|zitieren|erwähnen|antworten)\s+Sie\s+(?:\w+\s+){0,2}?(?:ausschließlich|niemals|nie)\b",
]

# a provision that defines terms instead of stating the rule a question asks for (issue 69): its heading, and the
# forms a definition takes ("Beruflich exponierte Person ist, wer …", "… im Sinne dieses Gesetzes ist …")
DEFINITION_HEADINGS = [r"Begriffsbestimmung\w*", r"Begriffe\b", r"Definitionen?\b"]
DEFINES = [r"\bist,?\s+wer\b", r"\bim\s+Sinne\s+(?:dieses|dieser|des|der)\s+(?:Gesetz\w*|Verordnung|Vorschrift\w*)\s+"
           r"(?:ist|sind|gilt|gelten)\b",
           r"\b(?:ist|sind)\s+(?:jede[rsmn]?|alle)\s+\w+,\s+(?:die|der|das|deren|dessen)\b",
           r"\bbezeichnet\s+(?:de[nrs]|die|das)\b"]
# plurals a stemmer does not bring back to their singular ("Organdosen" is held by "Organ-Äquivalentdosis"):
# (plural ending, singular ending); tried only when the word as written is not found
IRREGULAR_PLURALS = [("en", "is"), ("en", "um"), ("ien", "ium"), ("ien", "ie")]

# a question that asks what a term means: then a definition answers it
ASKS_DEFINITION = [r"\bwas\s+(?:ist|sind)\s+(?:ein\w*\s+)?\w+\s*(?:\?|im\s+Sinne)",
                   r"\bwas\s+versteht\s+man\s+unter\b", r"\bwas\s+bedeutet\b", r"\bwie\s+(?:ist|wird)\s+.{0,60}?"
                   r"definiert\b", r"\bBegriff\w*\b", r"\bDefinition\w*\b", r"\bim\s+Sinne\s+(?:des|der)\b"]

# how a law marks a section it no longer has: "§ 12 (weggefallen)", "§§ 14 bis 16 (weggefallen)"
REPEALED_MARKS = ["weggefallen", "aufgehoben"]
# the editor's note under an annex's heading that names where it was published: "(Fundstelle: BGBl. I 2017, 2046)"
EDITORIAL_NOTES = ["Fundstelle"]
RANGE_WORDS = ["bis", "und"]

# ---- how sentences are read (reasoning/text.py) ----
# abbreviations whose period ends no sentence ("Abs.", "z. B."), matched as written
ABBREVIATIONS = ["Abs", "Nr", "Art", "BGBl", "Buchst", "bzw", "vgl", "ggf", r"z\.\s?B", r"u\.\s?a", "S", "Anh", "Ziff",
                 "Kap"]
# the words a table's value cell may hold between its figures ("5 bis 10", "20 Prozent")
VALUE_WORDS = ["bis", "und", "Euro", "Prozent", r"v\.\s?H\."]
# after an article or a preposition, "<number>." is an ordinal ("das 75. Lebensjahr", "bis zum 31. Dezember"), not
# the end of a sentence
ORDINAL_LEADS = ["der", "die", "das", "den", "dem", "des", "ein", "eine", "einem", "einen", "einer", "eines", "am",
                 "im", "vom", "zum", "zur", "bis", "ab", "seit", "jedes", "jedem", "jeden", "jeder"]
# the drafting formulas of an enabling clause (Verordnungsermächtigung): "Die Bundesregierung wird ermächtigt, durch
# Rechtsverordnung …", "In der Rechtsverordnung kann insbesondere festgelegt werden, …"
AUTHORISES_REGULATION = [r"\b(?:wird|werden)\s+ermächtigt\b", r"\b(?:kann|können)\s+durch\s+Rechtsverordnung\b",
                         r"\b(?:In|Durch)\s+(?:der|einer)?\s*Rechtsverordnung\b[^.;]{0,120}?\b(?:kann|können)\b"]
# an enabling clause lists what the regulation governs as indirect questions or "dass" clauses ("festgelegt werden,
# 1. unter welchen Voraussetzungen …, 2. dass und wie …"), a preposition before them
GOVERNS_PREPOSITIONS = ["in", "unter", "auf", "nach", "bis", "für", "von", "mit", "durch", "zu", "bei", "aus"]
GOVERNS_OPENERS = [r"welche[rsmn]?", "wie", "wann", "wer", "wem", "wen", "was", "wo", r"wor\w+", r"wof\w+", "ob",
                   "dass", "daß"]
# a question about the power to regulate itself
ASKS_ABOUT_AUTHORISATION = ["ermächtig", r"Rechtsverordnung\s+erl"]
# what states a duty or a permission, and what opens a definition
DUTY = ["muss", "müssen", r"hat\s+\w+\s+zu", r"haben\s+\w+\s+zu", r"ist\s+verpflichtet", "darf", "dürfen"]
DEFINITION_OPENERS = [r"im\s+Sinne\s+dieses", r"ist\s+die", r"sind\s+die"]

# ---- how a researcher's reply is read (reasoning/dialogue_terms.py) ----
CLAUSE_CONJUNCTIONS = ["und", "oder", "aber", "sondern"]
# a case to leave out follows these ("ohne Genehmigungsverfahren", "keine Altanlagen"), a case to keep these ("nur
# Erwachsene"), with a preposition between ("nicht für Kinder")
NEGATIONS = ["ohne", "nicht", r"kein(?:e|en|er|es)?", "außer", "ausgenommen", r"abgesehen\s+von"]
RESTRICTIONS = ["nur", "ausschließlich", "lediglich"]
CASE_PREPOSITIONS = ["um", "für", "zu", "über"]
# words that open a phrase without naming its subject ("die …", "es geht um …")
LEADING_WORDS = ["die", "der", "das", "den", "dem", "des", "ein", "eine", "einen", "um", "es", "geht"]
# "keine Regeln für Personen unter 18 Jahren": the case is what the rules are for
CASE_AFTER = ["für", "über", "zu", "zur", "zum"]

# ---- where a question divides into parts (kb/retrieval/query.py) ----
CLAUSE_OPENERS = ["welche", "welcher", "welches", "wie", "wer", "was", "wann", "wo", "ob", "gibt", "muss", "müssen",
                  "darf"]
PART_OPENERS = ["welche", "welcher", "welches", "wie", "wer", "was", "wann", "wo", "ob", "gibt"]
PART_CONJUNCTION = "und"
COMMA_LEAD = "und"  # ", und welche …" divides as ", welche …" does

# ---- what a reference does (rabbithole/reference_types.py) ----
ANNEX_UNITS = ["Anlage", "Anlagen", "Anhang", "Anh."]
NOTE_UNITS = ["Fußnote", "Fußnoten"]
# the words before a reference that make it the source of a power to legislate ("durch Rechtsverordnung nach")
DELEGATES_BEFORE = (r"(?:durch|in\s+einer|in\s+der|die)\s+Rechtsverordnung(?:en)?\s+(?:nach|auf\s+Grund(?:\s+des)?|"
                    r"aufgrund(?:\s+des)?|gemäß)\s*$|(?:auf\s+Grund|aufgrund)\s+(?:des|der)\s*$|"
                    r"Ermächtigung\s+(?:nach|in|des)\s*$")
# the words of a reference's clause that apply it here ("Für X gilt § 5 entsprechend")
APPLIES_IN_CLAUSE = (r"\b(?:gilt|gelten)\b(?:\s+\S+){0,8}?\s+entsprechend\b|"
                     r"\bentsprechend\s+(?:anzuwenden|gilt|gelten)\b|\bentsprechende\s+Anwendung\b")

# ---- how documents are read at ingest (kb/ingest/parse.py, sections.py) ----
PAGE_WORDS = ["Seite"]  # a page footer: "Seite 3 von 12"
PAGE_OF_WORDS = ["von"]
STRUCTURAL_HEADINGS = ["Teil", "Kapitel", "Abschnitt", "Unterabschnitt", "Buch", "Titel"]
# a line that opens so continues a sentence ("Absatz 2 …", "und …"): no section heading, however it is set
BODY_STARTERS = [r"Abs\.", "Absatz", "Satz", r"Nr\.", "Nummer", "Buchstabe", "bis", "und", "oder", "sowie", "in", "des",
                 "der", "gilt", "ist", "sind"]
# "Einrichtungen im Sinne dieses Gesetzes sind …": the term a definition names (kb/retrieval/lexical.py)
DEFINED_IN_THE_SENSE = (r"(?P<term>(?:[A-ZÄÖÜ][\wäöüß-]*\s+){0,3}[A-ZÄÖÜ][\wäöüß-]+)\s+im\s+Sinne\s+"
                        r"(?:dieses|dieser)\s+(?:Gesetzes|Verordnung|Richtlinie)\s+(?:ist|sind)\b")

# ---- how a document names its parts (kb/ingest/sections.py, the resolver, the reader) ----
# the unit a heading opens a citable part with ("§ 78 Grenzwerte", "ARTIKEL 3", "Anlage 4 (zu § 8)")
HEADING_UNITS = [r"§§?", r"Art\.", "Artikel", "ARTIKEL", "Anlage", "ANLAGE"]
LABEL_UNITS = [r"§§?", r"Art\.", "Artikel", "Anlage"]  # a section label as one search token ("§78", "art.3")
QUOTED_SECTION_UNITS = [r"§§?", r"Art\.?", "Artikel", "Anlage"]  # a quoted reference's section ("§ 999 QStrG")
LEGAL_SECTION_UNITS = ["§", r"Art\.?", "Artikel", "Anlage", "Anhang"]  # a passage names a legal section
NUMBERED_BLOCK_UNITS: list[str] = []  # a rulebook's block printed number first (English only)
OUTLINE_UNITS: list[str] = []  # grouping units before a rule's number in a label (English only)
GROUPING_UNITS: list[str] = []
PATH_BLOCK_UNITS: list[str] = []  # labelled blocks of a rulebook's heading path (English only)
PATH_TOP_UNITS: list[str] = []
CAPTION_LABELS = ["Tabelle", "Anlage", "Anhang", "Teil", "Abschnitt", "Kapitel"]  # a line that only labels what follows
BIBLIOGRAPHY_HEADINGS = ["Literatur", "Literaturverzeichnis", "Quellen", "Quellenverzeichnis"]
PUBLICATION_WORDS = ["Publikation", "Veröffentlichung"]  # "ICRP Veröffentlichung 103"

# ---- how documents are named (kb/store/registry.py) ----
NO_TITLE_WORDS = ["unbenannt"]  # what a word processor leaves in a PDF's title field
NAME_ARTICLES = ["des", "der", "dem", "den", "die", "das", "dieses", "dieser"]
INFLECTION_ENDINGS = ["es", "en", "em", "er", "s", "n", "e"]
# the type of an act, not its name: alone ("der Verordnung vom 19. Juni 2020") it names no document
GENERIC_ACT_WORDS = ["gesetz", "gesetzes", "verordnung", "richtlinie", "satzung", "vertrag", "vertrages", "vertrags",
                     "abkommen", "übereinkommen", "bekanntmachung", "vorschrift", "regel", "regeln", "norm"]
# a compound that names an act by itself ("Kostenverordnung") ends in the act's type
ACT_TYPE_ENDINGS = ["gesetz", "verordnung", "richtlinie", "satzung", "ordnung", "vertrag"]

# what Tesseract misreads on German pages, corrected line by line in its output: "§" read as "$", "&" or (in a bold
# heading) "8" ("& 13 Allgemeine …", "8 14 Besondere …", "nach $ 12 des …"); German law writes no dollar amounts and
# no ampersand before a number, and a heading's "8 14" followed by a capitalised word is no figure
OCR_MISREADS = [(r"^(?:[$&][$&8]|8[$&8](?=\s))\s?(?=\d)", "§§ "), (r"^[$&]\s?(?=\d)", "§ "),
                (r"^8\s(?=\d{1,3}[a-z]?\s+[A-ZÄÖÜ])", "§ "),
                (r"(?<![\w$§])\$\$\s?(?=\d)", "§§ "), (r"(?<![\w$§&])[$&]\s?(?=\d)", "§ ")]
# ... and in a line that stands alone like a heading: "§55" read as "855" ("855 Zutritt zu …"), tried only where the
# corrected line then reads as a section heading
OCR_HEADING_MISREADS = [(r"^8(?=\d{1,3}[a-z]?\s+[A-ZÄÖÜ])", "§ ")]
TESSERACT_CODE = "deu"  # Tesseract's model for German (Debian package tesseract-ocr-deu)

# how the lexical search reads German: Snowball's stemmer, bm25s's stop words, compounds split into parts
SNOWBALL_STEMMER = "german"
STOP_WORDS = "STOPWORDS_GERMAN"  # bm25s.stopwords' list
SPLITS_COMPOUNDS = True
