"""Fictional demo documents written for Rabbithole Lab (no copied law text).

Each document is (collection, file name, title, subject, blocks); a block is
("h1" | "h2" | "p", text). `build_demo_kb.py` renders them to PDF.
"""

QSTRG = (
    "Recht",
    "QStrG.pdf",
    "Gesetz zum Schutz vor Quantenstrahlung (Quantenstrahlenschutzgesetz - QStrG)",
    "Fiktives Demonstrationsgesetz",
    [
        ("h1", "Gesetz zum Schutz vor Quantenstrahlung (Quantenstrahlenschutzgesetz - QStrG)"),
        ("h2", "Teil 1 - Allgemeine Vorschriften"),
        ("h2", "§ 1 Zweck des Gesetzes"),
        ("p", "(1) Dieses Gesetz dient dem Schutz von Mensch und Umwelt vor den schädlichen Wirkungen "
              "der Quantenstrahlung. Quantenstrahlung im Sinne dieses Gesetzes ist eine fiktive Strahlungsart, "
              "die nur in diesem Demonstrationskorpus vorkommt."),
        ("p", "(2) Die Anforderungen der Richtlinie 2013/59/Euratom werden sinngemäß berücksichtigt."),
        ("h2", "§ 2 Begriffsbestimmungen"),
        ("p", "(1) Beruflich exponierte Person ist, wer bei seiner Tätigkeit eine effektive Dosis von mehr als "
              "1 Millisievert im Kalenderjahr erhalten kann."),
        ("p", "(2) Quantenquelle ist jede Vorrichtung, die Quantenstrahlung aussendet. Für Quantenquellen "
              "hoher Aktivität gelten zusätzlich die §§ 8 und 9."),
        ("h2", "§ 3 Anzeigepflicht"),
        ("p", "(1) Wer eine Quantenquelle betreiben will, hat dies der zuständigen Behörde vier Wochen vor "
              "Beginn anzuzeigen. Der Anzeige sind die Unterlagen nach Anlage 1 beizufügen."),
        ("p", "(2) Die Anzeige ist entbehrlich, wenn eine Genehmigung nach § 4 erteilt wurde."),
        ("h2", "§ 4 Genehmigung"),
        ("p", "(1) Einer Genehmigung bedarf, wer eine Quantenquelle hoher Aktivität betreibt. Die Genehmigung "
              "ist zu erteilen, wenn die Voraussetzungen der §§ 8, 9 und 12 erfüllt sind."),
        ("p", "(2) Das Nähere zum Verfahren regelt die Quantenstrahlenschutzverordnung."),
        ("h2", "Teil 2 - Schutz der Beschäftigten"),
        ("h2", "§ 8 Strahlenschutzbeauftragte"),
        ("p", "(1) Der Betreiber hat eine ausreichende Anzahl von Strahlenschutzbeauftragten schriftlich zu "
              "bestellen. Die Fachkunde richtet sich nach § 7 der Quantenstrahlenschutzverordnung."),
        ("h2", "§ 9 Unterweisung"),
        ("p", "Beschäftigte sind vor Aufnahme der Tätigkeit und danach mindestens einmal jährlich zu unterweisen."),
        ("h2", "§ 12 Grenzwerte für beruflich exponierte Personen"),
        ("p", "(1) Der Grenzwert der effektiven Dosis beträgt für beruflich exponierte Personen "
              "20 Millisievert im Kalenderjahr."),
        ("p", "(2) Der Grenzwert der Organ-Äquivalentdosis beträgt für die Augenlinse 20 Millisievert und "
              "für die Haut 500 Millisievert im Kalenderjahr."),
        ("p", "(3) Für Personen unter 18 Jahren gilt abweichend von Absatz 1 ein Grenzwert von "
              "1 Millisievert im Kalenderjahr."),
        ("h2", "§ 13 Ermittlung der Dosis"),
        ("p", "Die Dosis ist nach den Regeln der Anlage 2 Teil B zu ermitteln. Die Messung erfolgt durch eine "
              "Messstelle, die nach DIN EN ISO 9001 zertifiziert ist."),
        ("h2", "§§ 14 bis 16 (weggefallen)"),
        ("h2", "Anlage 1 (zu § 3) Unterlagen zur Anzeige"),
        ("p", "1. Beschreibung der Quantenquelle, 2. Nachweis der Fachkunde nach § 8, "
              "3. Lageplan der Betriebsstätte."),
        ("h2", "Anlage 2 Ermittlung der Dosis"),
        ("p", "Teil A: Grundsätze. Die Dosis wird aus der Personendosis abgeleitet."),
        ("p", "Teil B: Rechenverfahren. Die Personendosis wird mit dem Wichtungsfaktor 1,5 multipliziert, "
              "wenn die Quelle gepulst betrieben wird."),
    ],
)

QSTRV = (
    "Recht",
    "QStrV.pdf",
    "Verordnung zum Schutz vor Quantenstrahlung (Quantenstrahlenschutzverordnung - QStrV)",
    "Fiktive Demonstrationsverordnung",
    [
        ("h1", "Verordnung zum Schutz vor Quantenstrahlung (Quantenstrahlenschutzverordnung - QStrV)"),
        ("h2", "§ 1 Anwendungsbereich"),
        ("p", "Diese Verordnung gilt für Tätigkeiten nach § 3 und § 4 des Quantenstrahlenschutzgesetzes."),
        ("h2", "§ 5 Dosisbegrenzung"),
        ("p", "(1) Der Betreiber hat dafür zu sorgen, dass die Grenzwerte nach § 12 des "
              "Quantenstrahlenschutzgesetzes für beruflich exponierte Personen nicht überschritten werden."),
        ("p", "(2) Für die Ermittlung der Dosis gilt § 13 QStrG. Werden Grenzwerte überschritten, ist nach § 6 "
              "zu verfahren."),
        ("h2", "§ 6 Maßnahmen bei Überschreitung"),
        ("p", "(1) Wird ein Grenzwert überschritten, ist die weitere Beschäftigung nur mit Zustimmung der "
              "Behörde zulässig. Die Behörde entscheidet innerhalb von zwei Wochen."),
        ("p", "(2) Die Überschreitung ist der Behörde unverzüglich mitzuteilen; § 12 Absatz 3 Satz 1 "
              "Nummer 2 QStrG bleibt unberührt."),
        ("h2", "§ 7 Fachkunde"),
        ("p", "(1) Die Fachkunde wird durch eine Ausbildung und einen Kurs von mindestens 16 Stunden erworben. "
              "Die Anforderungen des Regelwerks KTA 1401 sind zu beachten."),
        ("p", "(2) Die Fachkunde ist alle fünf Jahre zu aktualisieren."),
    ],
)

GUIDE = (
    "Technik",
    "Detector_Calibration_Guide.pdf",
    "Guide to Quantum Detector Calibration (QDC Guide)",
    "Fictional technical guide",
    [
        ("h1", "Guide to Quantum Detector Calibration (QDC Guide)"),
        ("h2", "1 Scope"),
        ("p", "This guide describes how detectors for quantum radiation are calibrated. It supports the "
              "dose determination required by § 13 QStrG."),
        ("h2", "2 Terms"),
        ("p", "A reference detector is a detector whose calibration is traceable to a national standard."),
        ("h2", "3 Calibration procedure"),
        ("p", "Detectors are calibrated against a reference detector in a shielded room. The calibration "
              "interval is given in section 4.2; the uncertainty budget follows ICRP Publication 103."),
        ("h2", "4 Intervals and records"),
        ("h2", "4.1 Records"),
        ("p", "Every calibration is recorded with date, reference detector and result. Records are kept "
              "for ten years."),
        ("h2", "4.2 Calibration intervals"),
        ("p", "Detectors in routine use are calibrated every 12 months. Detectors used for pulsed sources "
              "are calibrated every 6 months, see section 4.1 for the records. The quality system follows "
              "KTA 1401."),
    ],
)

PAPER = (
    "Technik",
    "Quantum_Dosimetry_Paper.pdf",
    "Pulsed Quantum Sources and Personal Dosimetry",
    "Fictional short paper",
    [
        ("h1", "Pulsed Quantum Sources and Personal Dosimetry"),
        ("h2", "1 Introduction"),
        ("p", "Pulsed quantum sources lead to underestimated personal doses [1]. Mueller and colleagues "
              "proposed a weighting factor of 1.5 for pulsed operation [Mueller2022]."),
        ("h2", "2 Method"),
        ("p", "We compared 40 dosimeters under pulsed and continuous operation, following the calibration "
              "guide [2]. Data are available at https://example.org/quantum-dosimetry."),
        ("h2", "3 Results"),
        ("p", "Pulsed operation underestimated the dose by 33 percent on average, which agrees with a "
              "weighting factor of 1.5 [Mueller2022]."),
        ("h2", "References"),
        ("p", "[1] A. Schmidt, Dose underestimation in pulsed fields, Journal of Fictional Dosimetry 12 (2020) 1-9."),
        ("p", "[2] Guide to Quantum Detector Calibration (QDC Guide), section 4.2."),
        ("p", "[Mueller2022] B. Mueller, C. Weber, Weighting factors for pulsed quantum radiation, 2022."),
    ],
)

DOCUMENTS = [QSTRG, QSTRV, GUIDE, PAPER]

REGISTRY = {
    "collections": {
        "Recht": {
            "documents": [
                {"filename": "QStrG.pdf", "synonyms": ["Quantenstrahlenschutzgesetz", "QStrG",
                                                       "Gesetz zum Schutz vor Quantenstrahlung"]},
                {"filename": "QStrV.pdf", "synonyms": ["Quantenstrahlenschutzverordnung", "QStrV",
                                                       "Verordnung zum Schutz vor Quantenstrahlung"]},
            ]
        },
        "Technik": {
            "documents": [
                {"filename": "Detector_Calibration_Guide.pdf",
                 "synonyms": ["QDC Guide", "Guide to Quantum Detector Calibration", "calibration guide"]},
                {"filename": "Quantum_Dosimetry_Paper.pdf",
                 "synonyms": ["Pulsed Quantum Sources and Personal Dosimetry"]},
            ]
        },
    }
}
