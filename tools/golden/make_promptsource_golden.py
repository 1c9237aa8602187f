"""Write golden files made by the REAL promptsource 0.2.3, for tests/test_golden_promptsource.py.

promptsource 0.2.3 needs Python < 3.10. Make a throwaway venv outside the repository and
run this script with its python (tools/golden/README.md has the exact commands)::

    /tmp/venvs/promptsource/bin/python tools/golden/make_promptsource_golden.py

It never imports prompt_style (which needs Python >= 3.10) and downloads nothing: the
templates are the ``templates.yaml`` files shipped in promptsource's sdist, and the
records are written below, by hand, with awkward variants made from them.

For each dataset in ``DATASETS`` it copies promptsource's ``templates.yaml`` to
``tests/golden/promptsource/templates/DATASET[/SUBSET]/templates.yaml`` and writes
``tests/golden/promptsource/DATASET[__SUBSET].json`` with, for every template (in file
order) and every record:

* ``parts``: ``Template.apply(record)`` with its defaults (``truncate=True``,
  ``highlight_variables=False``): the list of stripped parts, or ``error`` (the exception's
  type and message) when it raises;
* ``answer_choices``: ``Template.get_answer_choices_list(record)``, or ``answer_choices_error``.

promptsource's ``choice`` filter draws from Python's global ``random``. Before each call
the generator is seeded with ``random.seed(f"{SEED}:{canonical JSON of the record}")``
(sorted keys, no spaces, non-ASCII kept): the seed prompt-style's promptsource semantics
use for a record, so that both draw the same choices. Each call gets a deep copy of the
record (some templates mutate lists they are given).
"""

from __future__ import annotations

import copy
import json
import platform
import random
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden" / "promptsource"
SEED = 1234

LONG = 2300  # longer than promptsource's TEXT_VAR_LENGTH (2048): truncation shows


def record_seed(record):
    return f"{SEED}:" + json.dumps(record, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


# -- the records ------------------------------------------------------------------------

DATASETS = {
    ("super_glue", "rte"): [
        {
            "premise": "Dana Reeve, the widow of the actor Christopher Reeve, has died of lung cancer at age 44.",
            "hypothesis": "Christopher Reeve had an accident.",
            "idx": 0,
            "label": 1,
        },
        {
            "premise": "Yet, we now are discovering that antibiotics are losing their effectiveness.",
            "hypothesis": "Bacteria is winning the war against antibiotics.",
            "idx": 1,
            "label": 0,
        },
        {"premise": "A test record.", "hypothesis": "Its label is hidden.", "idx": 2, "label": -1},
    ],
    ("super_glue", "cb"): [
        {
            "premise": "It was a complex language. Not written down but handed down. One might say it was peeled down.",
            "hypothesis": "the language was peeled down",
            "idx": 0,
            "label": 0,
        },
        {"premise": "Do you mind if I use your phone?", "hypothesis": "she uses the phone", "idx": 1, "label": 2},
    ],
    ("super_glue", "boolq"): [
        {
            "question": "do iran and afghanistan speak the same language",
            "passage": "Persian language -- Persian is spoken in Iran, Afghanistan and Tajikistan.",
            "idx": 0,
            "label": 1,
        },
        {
            "question": "is the sun a planet",
            "passage": "The Sun is the star at the center of the Solar System.",
            "idx": 1,
            "label": 0,
        },
    ],
    ("super_glue", "copa"): [
        {
            "premise": "My body cast a shadow over the grass.",
            "choice1": "The sun was rising.",
            "choice2": "The grass was cut.",
            "question": "cause",
            "idx": 0,
            "label": 0,
        },
        {
            "premise": "The woman tolerated her friend's difficult behavior.",
            "choice1": "The woman knew her friend was going through a hard time.",
            "choice2": "The woman felt that her friend took advantage of her kindness.",
            "question": "effect",
            "idx": 1,
            "label": 1,
        },
    ],
    ("super_glue", "wic"): [
        {
            "word": "place",
            "sentence1": "Do you want to come over to my place later?",
            "sentence2": "A political system with no place for the less prominent groups.",
            "start1": 31,
            "start2": 27,
            "end1": 36,
            "end2": 32,
            "idx": 0,
            "label": 0,
        },
        {
            "word": "run",
            "sentence1": "I run every day.",
            "sentence2": "She runs a company.",
            "start1": 2,
            "start2": 4,
            "end1": 5,
            "end2": 8,
            "idx": 1,
            "label": 1,
        },
    ],
    ("super_glue", "wsc.fixed"): [
        {
            "text": "Mark told Pete many lies about himself, which Pete included in his book. He should have been more truthful.",
            "span1_index": 0,
            "span2_index": 13,
            "span1_text": "Mark",
            "span2_text": "He",
            "idx": 0,
            "label": 1,
        },
        {
            "text": "The trophy doesn't fit into the brown suitcase because it is too large.",
            "span1_index": 1,
            "span2_index": 9,
            "span1_text": "trophy",
            "span2_text": "it",
            "idx": 1,
            "label": 0,
        },
    ],
    ("super_glue", "multirc"): [
        {
            "paragraph": "While this process moved along, diplomacy continued its rounds.",
            "question": "What did the high-level effort to persuade Pakistan include?",
            "answer": "Persuading Pakistan",
            "idx": {"paragraph": 0, "question": 0, "answer": 0},
            "label": 0,
        },
        {
            "paragraph": "The sun rises in the east.",
            "question": "Where does the sun rise?",
            "answer": "In the east",
            "idx": {"paragraph": 1, "question": 0, "answer": 1},
            "label": 1,
        },
    ],
    ("super_glue", "record"): [
        {
            "passage": "The harrowing stories of women and children locked up for so-called 'moral crimes' in Afghanistan's notorious female prison.\n@highlight\nThe stories were told to CNN.\n@highlight\nSome women are jailed for running away.",
            "query": "The women of @placeholder prison share their stories.",
            "entities": ["Afghanistan", "CNN", "Badam Bagh"],
            "answers": ["Badam Bagh"],
            "idx": {"passage": 0, "query": 0},
        },
        {
            "passage": "Paris is the capital of France.\n@highlight\nIt is big.",
            "query": "@placeholder is in Europe.",
            "entities": ["Paris", "France", "France"],
            "answers": ["France", "Paris"],
            "idx": {"passage": 1, "query": 0},
        },
    ],
    ("glue", "mrpc"): [
        {
            "sentence1": 'Amrozi accused his brother, whom he called "the witness", of deliberately distorting his evidence.',
            "sentence2": 'Referring to him as only "the witness", Amrozi accused his brother of deliberately distorting his evidence.',
            "label": 1,
            "idx": 0,
        },
        {
            "sentence1": "Yucaipa owned Dominick's before selling the chain to Safeway in 1998 for $2.5 billion.",
            "sentence2": "Yucaipa bought Dominick's in 1995 for $693 million and sold it to Safeway for $1.8 billion in 1998.",
            "label": 0,
            "idx": 1,
        },
    ],
    ("anli", None): [
        {
            "uid": "0fd0abfb",
            "premise": "The Parma trolleybus system forms part of the public transport network of the city.",
            "hypothesis": "The trolleybus system has over 2 urban routes",
            "label": 0,
            "reason": "",
        },
        {
            "uid": "7ed72ff4",
            "premise": "Alexandra Lendon Bastedo was a British actress.",
            "hypothesis": "Sharron Macready was a popular character.",
            "label": 1,
            "reason": "A reason.",
        },
    ],
    ("imdb", None): [
        {
            "text": "I rented I AM CURIOUS-YELLOW from my video store because of all the controversy.<br /><br />It was fine.",
            "label": 0,
        },
        {"text": "A wonderful little production.", "label": 1},
    ],
    ("ag_news", None): [
        {
            "text": "Wall St. Bears Claw Back Into the Black (Reuters) Reuters - Short-sellers are seeing green again.",
            "label": 2,
        },
        {"text": "Olympics: a record in the pool.", "label": 1},
    ],
    ("trec", None): [
        {"text": "How did serfdom develop in and then leave Russia ?", "label_coarse": 2, "label_fine": 26},
        {"text": "What is the capital of Peru ?", "label_coarse": 5, "label_fine": 32},
    ],
    ("squad_v2", None): [
        {
            "id": "56be85543aeaaa14008c9063",
            "title": "Beyoncé",
            "context": "Beyoncé Giselle Knowles-Carter is an American singer, songwriter, record producer and actress.",
            "question": "When did Beyonce start becoming popular?",
            "answers": {
                "text": ["in the late 1990s", "late 1990s", "in the late 1990s"],
                "answer_start": [269, 272, 269],
            },
        },
        {
            "id": "5a8d7bf7df8bba001a0f9ab1",
            "title": "The_Legend_of_Zelda",
            "context": "Zelda is a video game.",
            "question": "What is unanswerable?",
            "answers": {"text": [], "answer_start": []},
        },
    ],
    ("hellaswag", None): [
        {
            "ind": 4,
            "activity_label": "Removing ice from car",
            "ctx_a": "Then, the man writes over the snow covering the window of a car, and a woman wearing winter clothes smiles.",
            "ctx_b": "then",
            "ctx": "Then, the man writes over the snow covering the window of a car, and a woman wearing winter clothes smiles. then",
            "endings": [
                ", the man adds wax to the windshield and cuts it.",
                ", a person board a ski lift, while two men supporting the head of the person wearing winter clothes snow as the we girls sled.",
                ", the man puts on a christmas coat, knitted with netting.",
                ", the man continues removing the snow on his car.",
            ],
            "source_id": "activitynet~v_-1IBHYS3L-Y",
            "split": "train",
            "split_type": "indomain",
            "label": "3",
        },
        {
            "ind": 5,
            "activity_label": "Baking cookies",
            "ctx_a": "A woman mixes dough.",
            "ctx_b": "she",
            "ctx": "A woman mixes dough. she",
            "endings": ["bakes it.", "throws it.", "eats it raw.", "paints it."],
            "source_id": "x",
            "split": "val",
            "split_type": "zeroshot",
            "label": "0",
        },
    ],
    ("ai2_arc", "ARC-Challenge"): [
        {
            "id": "Mercury_SC_415702",
            "question": "George wants to warm his hands quickly by rubbing them. Which skin surface will produce the most heat?",
            "choices": {
                "text": ["dry palms", "wet palms", "palms covered with oil", "palms covered with lotion"],
                "label": ["A", "B", "C", "D"],
            },
            "answerKey": "A",
        },
        {
            "id": "MCAS_2000_4_6",
            "question": "Which technology was developed most recently?",
            "choices": {
                "text": ["cellular telephone", "television", "refrigerator", "airplane"],
                "label": ["1", "2", "3", "4"],
            },
            "answerKey": "1",
        },
    ],
    ("cos_e", "v1.11"): [
        {
            "id": "075e483d21c29a511267ef62bedc0461",
            "question": "The sanctions against the school were a punishing blow, and they seemed to what the efforts the school had made to change?",
            "choices": ["ignore", "enforce", "authoritarian", "yell at", "avoid"],
            "answer": "ignore",
            "abstractive_explanation": "The sanctions ignore the efforts.",
            "extractive_explanation": "sanctions were a punishing blow",
        },
        {
            "id": "61fe6e879ff18686d7552425a36344c8",
            "question": "Sammy wanted to go to where the people were. Where might he go?",
            "choices": ["race track", "populated areas", "the desert", "apartment", "roadblock"],
            "answer": "populated areas",
            "abstractive_explanation": "Populated areas have people.",
            "extractive_explanation": "where the people were",
        },
    ],
    ("winogrande", "winogrande_xl"): [
        {
            "sentence": "John moved the couch from the garage to the backyard to create space. The _ is small.",
            "option1": "garage",
            "option2": "backyard",
            "answer": "1",
        },
        {
            "sentence": "The doctor diagnosed Justin with bipolar and Robert with anxiety. _ had terrible nerves recently.",
            "option1": "Justin",
            "option2": "Robert",
            "answer": "2",
        },
    ],
    ("race", "all"): [
        {
            "example_id": "high132.txt",
            "article": "Last week I talked with some of my students about what they wanted to do after they graduated.",
            "answer": "D",
            "question": "We can know from the passage that the author works as a_.",
            "options": ["doctor", "lawyer", "teacher", "professor"],
        },
        {
            "example_id": "middle1.txt",
            "article": "Tom has a dog.",
            "answer": "A",
            "question": "What does Tom have?",
            "options": ["a dog", "a cat", "a bird", "a fish"],
        },
    ],
    ("commonsense_qa", None): [
        {
            "id": "075e483d21c29a511267ef62bedc0461",
            "question": "The sanctions against the school were a punishing blow, and they seemed to what the efforts the school had made to change?",
            "question_concept": "punishing",
            "choices": {
                "label": ["A", "B", "C", "D", "E"],
                "text": ["ignore", "enforce", "authoritarian", "yell at", "avoid"],
            },
            "answerKey": "A",
        },
        {
            "id": "x2",
            "question": "Where is a good place to keep a plant?",
            "question_concept": "plant",
            "choices": {
                "label": ["A", "B", "C", "D", "E"],
                "text": ["windowsill", "freezer", "oven", "drawer", "shoe"],
            },
            "answerKey": "A",
        },
    ],
    ("piqa", None): [
        {
            "goal": "When boiling butter, when it's ready, you can",
            "sol1": "Pour it onto a plate",
            "sol2": "Pour it into a jar",
            "label": 1,
        },
        {
            "goal": "To clean a cast iron pan,",
            "sol1": "use salt and a paper towel.",
            "sol2": "run it through the dishwasher.",
            "label": 0,
        },
    ],
    ("quoref", None): [
        {
            "id": "ba3f052c",
            "question": "What is the last name of the person who is a musician?",
            "context": "The earliest known inhabitants were Native Americans. Mr. Smith is a musician.",
            "title": "Town history",
            "url": "https://en.wikipedia.org/wiki/Town",
            "answers": {"answer_start": [60], "text": ["Smith"]},
        },
        {
            "id": "x2",
            "question": "Who sang?",
            "context": "Ann sang and Bob danced.",
            "title": "Show",
            "url": "u",
            "answers": {"answer_start": [0, 0], "text": ["Ann", "Ann"]},
        },
    ],
    ("openbookqa", "main"): [
        {
            "id": "7-980",
            "question_stem": "The sun is responsible for",
            "choices": {
                "text": [
                    "puppies learning new tricks",
                    "children growing up and getting old",
                    "flowers wilting in a vase",
                    "plants sprouting, blooming and wilting",
                ],
                "label": ["A", "B", "C", "D"],
            },
            "answerKey": "D",
        },
        {
            "id": "7-584",
            "question_stem": "When standing miles away from Mount Rushmore",
            "choices": {
                "text": [
                    "the mountains seem very close",
                    "the mountains are boring",
                    "the mountains look the same as from up close",
                    "the mountains seem smaller than in photographs",
                ],
                "label": ["A", "B", "C", "D"],
            },
            "answerKey": "D",
        },
    ],
    ("xsum", None): [
        {
            "document": "The full cost of damage in Newton Stewart, one of the areas worst affected, is still being assessed.\nRepair work is ongoing.",
            "summary": "Clean-up operations are continuing across the Scottish Borders.",
            "id": "35232142",
        },
        {
            "document": "A fire alarm went off at the Holiday Inn.",
            "summary": "Two people were injured.",
            "id": "40143035",
        },
    ],
    ("cosmos_qa", None): [
        {
            "id": "3Q9SPIIRWJKVQ8244310E8TUS6YWAC##34V1S5K3GTZMDUBNBIGY93FLDB690J##A1S1K7134S2VUC##Blog_1044056##q1_a1##3XU9MCX6VQQG7YPLCSAFDPQNH4GR20",
            "context": "Good Old War and person L : I saw both of these bands Wednesday night.",
            "question": "In the future , will this person go to see other bands play ?",
            "answer0": "None of the above choices .",
            "answer1": "This person likes music and likes to see the show .",
            "answer2": "This person only likes Good Old War and Person L .",
            "answer3": "Other Bands is not on tour .",
            "label": 1,
        },
        {
            "id": "x2",
            "context": "It rained.",
            "question": "Why was the grass wet?",
            "answer0": "It rained .",
            "answer1": "A dog .",
            "answer2": "Sprinklers .",
            "answer3": "None .",
            "label": 0,
        },
    ],
    ("freebase_qa", None): [
        {
            "Question-ID": "FreebaseQA-train-0",
            "RawQuestion": "What was Sting's real name?",
            "ProcessedQuestion": "what was sting's real name",
            "Parses": {
                "Parse-Id": ["FreebaseQA-train-0.P0", "FreebaseQA-train-0.P1"],
                "PotentialTopicEntityMention": ["sting", "sting"],
                "TopicEntityName": ["sting", "the police"],
                "TopicEntityMid": ["m.0lbj1", "m.0b1hw"],
                "InferentialChain": ["music.artist.real_name", "people.person.birth_name"],
                "Answers": [
                    {"AnswersMid": ["m.01vrt_c"], "AnswersName": [["gordon matthew thomas sumner"]]},
                    {"AnswersMid": ["m.01vrt_d"], "AnswersName": [["gordon sumner"]]},
                ],
            },
        },
        {
            "Question-ID": "FreebaseQA-train-1",
            "RawQuestion": "Who wrote Hamlet?",
            "ProcessedQuestion": "who wrote hamlet",
            "Parses": {
                "Parse-Id": ["P0"],
                "PotentialTopicEntityMention": ["hamlet"],
                "TopicEntityName": ["hamlet"],
                "TopicEntityMid": ["m.1"],
                "InferentialChain": ["book.written_work.author"],
                "Answers": [{"AnswersMid": ["m.2"], "AnswersName": [["william shakespeare"]]}],
            },
        },
    ],
    ("ambig_qa", "light"): [
        {
            "id": "-4469503464110108318",
            "question": "When did the simpsons first air on television?",
            "annotations": {
                "type": ["multipleQAs"],
                "answer": [[]],
                "qaPairs": [
                    {
                        "question": [
                            "When did the Simpsons first air on television as an animated short?",
                            "When did the Simpsons first air as a half-hour prime time show?",
                        ],
                        "answer": [["April 19, 1987"], ["December 17, 1989"]],
                    }
                ],
            },
        },
        {
            "id": "x2",
            "question": "Who wrote Hamlet?",
            "annotations": {
                "type": ["singleAnswer"],
                "answer": [["William Shakespeare", "Shakespeare"]],
                "qaPairs": [{"question": [], "answer": []}],
            },
        },
    ],
    ("wiki_qa", None): [
        {
            "question_id": "Q1",
            "question": "how are glacier caves formed?",
            "document_title": "Glacier cave",
            "answer": "A partly submerged glacier cave on Perito Moreno Glacier .",
            "label": 0,
        },
        {
            "question_id": "Q1",
            "question": "how are glacier caves formed?",
            "document_title": "Glacier cave",
            "answer": "A glacier cave is a cave formed within the ice of a glacier .",
            "label": 1,
        },
    ],
    ("math_qa", None): [
        {
            "Problem": "the banker ' s gain of a certain sum due 3 years hence at 10 % per annum is rs . 36 . what is the present worth ?",
            "Rationale": '"explanation : t = 3 years r = 10 %"',
            "options": "a ) rs . 400 , b ) rs . 300 , c ) rs . 500 , d ) rs . 350 , e ) none of these",
            "correct": "a",
            "annotated_formula": "divide(multiply(const_100, divide(multiply(36, const_100), multiply(3, 10))), multiply(3, 10))",
            "linear_formula": "multiply(n2,const_100)|",
            "category": "gain",
        },
        {
            "Problem": "what is 2 + 2 ?",
            "Rationale": '"2 + 2 = 4"',
            "options": "a ) 3 , b ) 4 , c ) 5 , d ) 6 , e ) 7",
            "correct": "b",
            "annotated_formula": "add(2, 2)",
            "linear_formula": "add(n0,n1)|",
            "category": "general",
        },
    ],
    ("sciq", None): [
        {
            "question": "What type of organism is commonly used in preparation of foods such as cheese and yogurt?",
            "distractor3": "viruses",
            "distractor1": "protozoa",
            "distractor2": "gymnosperms",
            "correct_answer": "mesophilic organisms",
            "support": "Mesophiles grow best in moderate temperature.",
        },
        {
            "question": "What is H2O?",
            "distractor3": "salt",
            "distractor1": "air",
            "distractor2": "fire",
            "correct_answer": "water",
            "support": "",
        },
    ],
    ("social_i_qa", None): [
        {
            "context": "Cameron decided to have a barbecue and gathered her friends together.",
            "question": "How would Others feel as a result?",
            "answerA": "like attending",
            "answerB": "like staying home",
            "answerC": "a good friend to have",
            "label": "1",
        },
        {
            "context": "Jan needed to give out jobs for an upcoming project at work.",
            "question": "What will Others want to do next?",
            "answerA": "disagree with Jan",
            "answerB": "get to work",
            "answerC": "argue with the assignments",
            "label": "2",
        },
    ],
    ("amazon_polarity", None): [
        {
            "label": 1,
            "title": "Stuning even for the non-gamer",
            "content": "This sound track was beautiful! It paints the senery in your mind so well.",
        },
        {"label": 0, "title": "Broken", "content": "It broke in a day."},
    ],
    ("story_cloze", "2016"): [
        {
            "story_id": "138d5bfb",
            "input_sentence_1": "Rick grew up in a troubled household.",
            "input_sentence_2": "He never found good support in family, and turned to gangs.",
            "input_sentence_3": "It wasn't long before Rick got shot in a robbery.",
            "input_sentence_4": "The incident caused him to turn a new leaf.",
            "sentence_quiz1": "He is happy now.",
            "sentence_quiz2": "He joined a gang.",
            "answer_right_ending": 1,
        },
        {
            "story_id": "x2",
            "input_sentence_1": "A.",
            "input_sentence_2": "B.",
            "input_sentence_3": "C.",
            "input_sentence_4": "D.",
            "sentence_quiz1": "E1.",
            "sentence_quiz2": "E2.",
            "answer_right_ending": 2,
        },
    ],
    ("qasc", None): [
        {
            "id": "3E7TUJ2EGCLQNOV1WEAJ2NN9ROPD9K",
            "question": "What type of water formation is formed by clouds?",
            "choices": {
                "text": ["pearls", "streams", "shells", "diamonds", "rain", "beads", "cooled", "liquid"],
                "label": ["A", "B", "C", "D", "E", "F", "G", "H"],
            },
            "answerKey": "F",
            "fact1": "beads of water are formed by water vapor condensing",
            "fact2": "Clouds are made of water vapor.",
            "combinedfact": "Beads of water can be formed by clouds.",
            "formatted_question": "What type of water formation is formed by clouds? (A) pearls (B) streams",
        },
        {
            "id": "x2",
            "question": "What do plants need?",
            "choices": {"text": ["light", "dark"], "label": ["A", "B"]},
            "answerKey": "A",
            "fact1": "Plants need light.",
            "fact2": "Light is energy.",
            "combinedfact": "Plants need energy.",
            "formatted_question": "What do plants need? (A) light (B) dark",
        },
    ],
    ("yahoo_answers_qa", None): [
        {
            "id": "3395393",
            "question": "why doesn't an optical mouse work on a glass table?",
            "answer": "Optical mice use an LED and a camera to rapidly capture images of the surface beneath the mouse.",
            "nbestanswers": ["Optical mice use an LED and a camera.", "or even on some surfaces like glass"],
            "main_category": "Computers & Internet",
        },
        {
            "id": "x2",
            "question": "what is 1+1?",
            "answer": "2",
            "nbestanswers": ["2", "two", "2"],
            "main_category": "Science & Mathematics",
        },
    ],
    ("kilt_tasks", "hotpotqa"): [
        {
            "id": "5a7a06935542990198eaf050",
            "input": "Which magazine was started first Arthur's Magazine or First for Women?",
            "meta": {
                "left_context": "",
                "mention": "",
                "right_context": "",
                "partial_evidence": [],
                "obj_surface": [],
                "sub_surface": [],
                "subj_aliases": [],
                "template_questions": [],
            },
            "output": [
                {"answer": "Arthur's Magazine", "meta": {"score": 0}, "provenance": []},
                {"answer": "Arthur's Magazine", "meta": {"score": 0}, "provenance": []},
            ],
        },
        {
            "id": "x2",
            "input": "Who is older?",
            "meta": {
                "left_context": "",
                "mention": "",
                "right_context": "",
                "partial_evidence": [],
                "obj_surface": [],
                "sub_surface": [],
                "subj_aliases": [],
                "template_questions": [],
            },
            "output": [{"answer": "Ann", "meta": {"score": 0}, "provenance": []}],
        },
    ],
    ("wiki_hop", "original"): [
        {
            "id": "WH_train_0",
            "question": "participant_of juan rossell",
            "answer": "1996 summer olympics",
            "candidates": ["1992 summer olympics", "1996 summer olympics", "2004 summer olympics"],
            "supports": [
                "The 2004 Summer Olympic Games were held in Athens.",
                "Juan Rossell played at the 1996 Summer Olympics.",
            ],
            "annotations": [],
        },
        {
            "id": "WH_train_1",
            "question": "country x",
            "answer": "france",
            "candidates": ["france", "spain"],
            "supports": ["X is in France."],
            "annotations": [],
        },
    ],
    ("lambada", None): [
        {
            "text": "her pay for the evening was almost double that of the wait staff and although that did n't seem like a lot to her , she was grateful for the extra money",
            "domain": None,
        },
        {"text": "one", "domain": "x"},
        {"text": "a record with the reserved key", "answer_choices": "not allowed", "domain": None},
    ],
}


# -- awkward variants -----------------------------------------------------------------------


def _awkward_text(text: str) -> str:
    return f"  {text} ||| {{{{ x }}}} {{% raw %}} ünï — 日本 🙂\t\n"


def _long_text(text: str) -> str:
    text = text or "x"
    return ((text + " ") * (LONG // (len(text) + 1) + 1))[:LONG]


def awkward(record: dict) -> dict:
    """Top-level strings with |||, template syntax, unicode and surrounding whitespace."""
    return {k: _awkward_text(v) if isinstance(v, str) else v for k, v in record.items()}


def long_and_nested(record: dict) -> dict:
    """The first top-level string longer than 2048 characters, and a ||| inside the first
    string of every list (not protected: it splits the prompt in promptsource too)."""
    out = {}
    made_long = False
    for key, value in record.items():
        if isinstance(value, str) and not made_long:
            out[key] = _long_text(value)
            made_long = True
        elif isinstance(value, list) and value and isinstance(value[0], str):
            out[key] = [value[0] + " ||| nested"] + value[1:]
        else:
            out[key] = value
    return out


def records_for(base: list) -> list:
    out = list(base)
    out.append(awkward(base[0]))
    out.append(long_and_nested(base[0]))
    return out


# -- running promptsource ----------------------------------------------------------------------


def _error(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def golden_for(dataset: str, subset, records: list, promptsource_root: Path) -> dict:
    from promptsource.templates import DatasetTemplates

    templates = DatasetTemplates(dataset, subset)
    cases = []
    for template in templates.templates.values():
        for number, record in enumerate(records):
            case = {"template_id": template.get_id(), "template_name": template.get_name(), "record": number}
            random.seed(record_seed(record))
            try:
                case["parts"] = template.apply(copy.deepcopy(record))
            except Exception as exc:  # noqa: BLE001 - the golden records what promptsource raises
                case["error"] = _error(exc)
            random.seed(record_seed(record))
            try:
                case["answer_choices"] = template.get_answer_choices_list(copy.deepcopy(record))
            except Exception as exc:  # noqa: BLE001
                case["answer_choices_error"] = _error(exc)
            cases.append(case)
    source = Path(templates.yaml_path).relative_to(promptsource_root)
    return {"dataset": dataset, "subset": subset, "source": str(source), "records": records, "cases": cases}


def _dumps(golden: dict) -> str:
    """JSON with one record and one case per line (readable diffs, small files)."""
    lines = ["{"]
    items = list(golden.items())
    for number, (key, value) in enumerate(items):
        comma = "," if number < len(items) - 1 else ""
        if isinstance(value, list):
            lines.append(f"  {json.dumps(key)}: [")
            lines.extend(
                "    " + json.dumps(item, ensure_ascii=False) + ("," if i < len(value) - 1 else "")
                for i, item in enumerate(value)
            )
            lines.append(f"  ]{comma}")
        else:
            lines.append(f"  {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main() -> int:
    import jinja2
    import promptsource
    import yaml

    promptsource_root = Path(promptsource.__file__).resolve().parent
    from importlib.metadata import version

    generator = {
        "promptsource": version("promptsource"),
        "jinja2": jinja2.__version__,
        "pyyaml": yaml.__version__,
        "python": platform.python_version(),
        "seed": SEED,
        "truncate": True,
        "highlight_variables": False,
    }
    if generator["promptsource"] != "0.2.3":
        print(f"expected promptsource 0.2.3, found {generator['promptsource']}", file=sys.stderr)
        return 1
    GOLDEN.mkdir(parents=True, exist_ok=True)
    total_templates = total_cases = 0
    for (dataset, subset), base in DATASETS.items():
        golden = golden_for(dataset, subset, records_for(base), promptsource_root)
        golden = {"generator": generator, **golden}
        stem = dataset if subset is None else f"{dataset}__{subset}"
        (GOLDEN / f"{stem}.json").write_text(_dumps(golden), encoding="utf-8")
        target = GOLDEN / "templates" / Path(golden["source"]).relative_to("templates")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(promptsource_root / golden["source"], target)
        n_templates = len({c["template_id"] for c in golden["cases"]})
        total_templates += n_templates
        total_cases += len(golden["cases"])
        print(f"{stem}: {n_templates} templates, {len(golden['cases'])} cases")
    print(f"total: {total_templates} templates, {total_cases} cases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
