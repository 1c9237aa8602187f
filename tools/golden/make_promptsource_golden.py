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

PIPE_PROTECTOR = "3ed2dface8203c4c9dfb1a5dc58e41e0"  # promptsource's Template.pipe_protector
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


# -- every template file: records synthesised from what each template reads ------------------
#
# The hand-written records above cover 38 datasets. For the rest (and again for those), the
# records of each template are made from the fields its Jinja reads: the template and its
# answer choices are parsed, every path from a record field (``answers.text[0]``, a loop
# over ``choices``, ``label`` used as an index or compared with a number, ``x.split()``,
# ``x | join``) is collected, and a record of the shape those paths need is written in
# SYNTH_VARIANTS flavours: plain values; awkward strings (``|||``, template syntax,
# unicode, whitespace; no ``|||`` inside lists); edge values (empty and blank strings,
# the protector string, a lone ``|||``, ``}}`` and ``{{``); and wrong types (None, bools,
# floats, empty lists and mappings where text is expected). Whatever promptsource does with
# them -- render, fail, or split into other than two parts -- is the golden.

SYNTH_VARIANTS = ("plain", "awkward", "edge", "types")
_LIST_FILTERS = {
    "join", "length", "count", "choice", "first", "last", "random", "sort", "unique", "list",
    "most_frequent", "sum", "map", "select", "reject", "selectattr", "rejectattr", "batch",
    "slice", "reverse", "min", "max", "groupby",
}  # fmt: skip
_STR_FILTERS = {"lower", "upper", "capitalize", "title", "replace", "trim", "wordcount", "center", "truncate"}
_STR_METHODS = {
    "split", "strip", "lower", "upper", "replace", "capitalize", "title", "startswith", "endswith",
    "rstrip", "lstrip", "find", "index", "count", "format", "splitlines", "isdigit", "rsplit",
}  # fmt: skip
_DICT_METHODS = {"items", "keys", "values", "get"}
_LIST_METHODS = {"append", "pop", "extend", "insert", "remove", "sort", "reverse"}
_NOT_FIELDS = {"loop", "answer_choices", "zip", "range", "namespace", "dict", "lipsum", "cycler", "joiner"}
_WORDS = ["Alpha beta gamma.", "Second value here", "third option", "Fourth answer", "fifth"]


class _Shapes:
    """Paths from record fields that a template reads, each with hints of its type."""

    def __init__(self):
        self.paths = {}

    def hint(self, path, kind):
        if path is None:
            return
        hints = self.paths.setdefault(path, set())
        if kind:
            hints.add(kind)

    def path(self, node, scope):
        from jinja2 import nodes

        if isinstance(node, nodes.Name):
            if node.name in scope:
                return scope[node.name]
            return None if node.name in _NOT_FIELDS else (node.name,)
        if isinstance(node, nodes.Getattr):
            base = self.path(node.node, scope)
            return None if base is None else base + ("." + node.attr,)
        if isinstance(node, nodes.Getitem):
            base = self.path(node.node, scope)
            if base is None:
                return None
            arg = node.arg
            if isinstance(arg, nodes.Const) and isinstance(arg.value, bool):
                return base + ("[]",)
            if isinstance(arg, nodes.Const) and isinstance(arg.value, int):
                return base + (f"[{arg.value}]",)
            if isinstance(arg, nodes.Const) and isinstance(arg.value, str):
                return base + ("." + arg.value,)
            if isinstance(arg, nodes.Slice):
                self.hint(base, "list")
                return base
            if isinstance(arg, nodes.UnaryExpr):
                return base + ("[-1]",)
            self.visit(arg, scope)
            self.hint(self.path(arg, scope), "int")
            return base + ("[]",)
        return None

    def visit(self, node, scope):  # noqa: C901 - one branch per kind of node
        from jinja2 import nodes

        if isinstance(node, nodes.For):
            inner = dict(scope)
            self.visit(node.iter, scope)
            iterated = node.iter
            if (
                isinstance(iterated, nodes.Call)
                and isinstance(iterated.node, nodes.Name)
                and iterated.node.name == "zip"
            ):
                zipped = [self.path(arg, scope) for arg in iterated.args]
                targets = node.target.items if isinstance(node.target, nodes.Tuple) else []
                for target, path in zip(targets, zipped):
                    if isinstance(target, nodes.Name):
                        inner[target.name] = None if path is None else path + ("[]",)
                for path in zipped:
                    self.hint(path, "list")
            else:
                while isinstance(iterated, nodes.Filter):
                    iterated = iterated.node
                method = None
                if isinstance(iterated, nodes.Call) and isinstance(iterated.node, nodes.Getattr):
                    method, path = iterated.node.attr, self.path(iterated.node.node, scope)
                else:
                    path = self.path(iterated, scope)
                if method is None and path is not None and isinstance(node.target, nodes.Name):
                    self.hint(path, "list")
                    inner[node.target.name] = path + ("[]",)
                else:
                    if method == "items":
                        self.hint(path, "dict")
                    for target in node.target.find_all(nodes.Name):
                        inner[target.name] = None
            for child in [*node.body, *node.else_] + ([node.test] if node.test is not None else []):
                self.visit(child, inner)
            return
        if isinstance(node, nodes.Assign):
            self.visit(node.node, scope)
            if isinstance(node.target, nodes.Name):
                scope[node.target.name] = self.path(node.node, scope)
            else:
                for target in node.target.find_all(nodes.Name):
                    scope[target.name] = None
            return
        if isinstance(node, nodes.AssignBlock):
            for target in node.target.find_all(nodes.Name):
                scope[target.name] = None
            for child in node.body:
                self.visit(child, scope)
            return
        if isinstance(node, nodes.Macro):
            inner = dict(scope)
            for arg in node.args:
                inner[arg.name] = None
            for child in node.body:
                self.visit(child, inner)
            return
        if isinstance(node, (nodes.Filter, nodes.Test)):
            if node.node is not None:
                path = self.path(node.node, scope)
                if node.name in _LIST_FILTERS:
                    self.hint(path, "list")
                elif node.name in _STR_FILTERS:
                    self.hint(path, "str")
                elif isinstance(node, nodes.Test) and node.name in ("number", "integer"):
                    self.hint(path, "int")
                self.visit(node.node, scope)
            for arg in [*node.args, *(kw.value for kw in node.kwargs)]:
                self.visit(arg, scope)
            return
        if isinstance(node, nodes.Call):
            if isinstance(node.node, nodes.Getattr):
                path, method = self.path(node.node.node, scope), node.node.attr
                if method in _STR_METHODS:
                    self.hint(path, "str")
                elif method in _DICT_METHODS:
                    self.hint(path, "dict")
                elif method in _LIST_METHODS:
                    self.hint(path, "list")
                self.visit(node.node.node, scope)
            else:
                self.visit(node.node, scope)
            for arg in [*node.args, *(kw.value for kw in node.kwargs)]:
                self.visit(arg, scope)
            return
        if isinstance(node, nodes.Compare):
            operands = [node.expr] + [op.expr for op in node.ops]
            constants = [o.value for o in operands if isinstance(o, nodes.Const)]
            numeric = any(isinstance(c, (int, float)) and not isinstance(c, bool) for c in constants)
            textual = any(isinstance(c, str) for c in constants)
            for operand in operands:
                self.visit(operand, scope)
                path = self.path(operand, scope)
                if numeric:
                    self.hint(path, "int")
                elif textual:
                    self.hint(path, "str")
            for op in node.ops:
                if op.op in ("in", "notin"):
                    self.hint(self.path(op.expr, scope), "list")
            return
        if isinstance(node, nodes.BinExpr) and not isinstance(node, (nodes.And, nodes.Or, nodes.Concat)):
            for operand, other in ((node.left, node.right), (node.right, node.left)):
                self.visit(operand, scope)
                if isinstance(other, nodes.Const) and isinstance(other.value, (int, float)):
                    self.hint(self.path(operand, scope), "int")
            return
        if isinstance(node, (nodes.Name, nodes.Getattr, nodes.Getitem)):
            self.hint(self.path(node, scope), None)
            if isinstance(node, nodes.Getitem):
                self.visit(node.arg, scope)
            if not isinstance(node, nodes.Name) and not isinstance(node.node, nodes.Name):
                self.visit(node.node, scope)
            return
        for child in node.iter_child_nodes():
            self.visit(child, scope)


def template_paths(sources):
    """The record paths ``sources`` (Jinja texts) read, with type hints."""
    from jinja2 import BaseLoader, Environment

    environment = Environment(loader=BaseLoader)
    shapes = _Shapes()
    for source in sources:
        if source is None:
            continue
        try:
            tree = environment.parse(source)
        except Exception:  # noqa: BLE001 - a template that does not parse reads nothing
            continue
        shapes.visit(tree, {})
    return shapes.paths


def _trie(paths):
    trie = {}
    for path, hints in paths.items():
        node = trie
        for step in path:
            node = node.setdefault(step, {})
        node.setdefault("__hints__", set()).update(hints)
    return trie


def _leaf(kind, variant, counter, in_list):
    counter[0] += 1
    i = counter[0]
    if kind == "int":
        return {"plain": 0, "awkward": 1, "edge": 1, "types": [0, 1.0, True, None][i % 4]}[variant]
    word = _WORDS[i % len(_WORDS)]
    if variant == "plain":
        return word
    if variant == "awkward":
        text = [
            f"  {word} ||| {{{{ x }}}} {{% raw %}} ünï — 日本 🙂\t\n",
            f"{word} ||| and |||| four",
            f"{{{{ answer_choices }}}} {word} {{# c #}}",
            f"Ünïcödé “quotes” {word}\u00a0nbsp",
        ][i % 4]
        return text.replace("|||", "| |") if in_list else text
    if variant == "edge":
        values = ["", "   ", PIPE_PROTECTOR, "line1\n\nline2\r\n", "42", "|||", "a }} b {{ c"]
        return [v for v in values if not (in_list and "|||" in v)][i % (len(values) - in_list)]
    return [None, True, 2.5, 7, -3, [], {}][i % 7]


def _value(node, variant, counter, in_list=False):
    hints = node.get("__hints__", set())
    attrs = {k: v for k, v in node.items() if k.startswith(".")}
    items = {k: v for k, v in node.items() if k.startswith("[")}
    if attrs and not items:
        return {k[1:]: _value(v, variant, counter, in_list) for k, v in attrs.items()}
    if items or "list" in hints:
        indices = [int(k[1:-1]) for k in items if k != "[]"]
        needed = max([i + 1 for i in indices if i >= 0] or [1])
        length = needed if variant == "edge" else max(3, needed)
        merged = {"__hints__": set()}
        for child in items.values():
            for key, value in child.items():
                if key == "__hints__":
                    merged["__hints__"] |= value
                else:
                    merged.setdefault(key, value)
        return [_value(merged, variant, counter, True) for _ in range(length)]
    if "dict" in hints:
        return {"key one": _leaf("str", variant, counter, in_list), "k2": _leaf("str", variant, counter, in_list)}
    return _leaf("int" if "int" in hints else "str", variant, counter, in_list)


def synthesised_records(sources):
    """One record per SYNTH_VARIANTS flavour, of the shape the Jinja ``sources`` read."""
    trie = _trie(template_paths(sources))
    records = []
    for variant in SYNTH_VARIANTS:
        counter = [0]
        records.append({k: _value(v, variant, counter) for k, v in trie.items() if k != "__hints__"})
    return records


def synthesised_golden(path: Path, promptsource_root: Path) -> dict:
    """Every template of one ``templates.yaml``, on records synthesised for it."""
    import yaml
    from promptsource.templates import Template  # noqa: F401 - registers the !Template tags

    data = yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.FullLoader)  # promptsource's own loading
    records, index, cases, fixed = [], {}, [], {}
    for template in data["templates"].values():
        random.seed(f"{SEED}:")
        try:
            fixed[template.get_id()] = template.get_fixed_answer_choices_list()
        except Exception as exc:  # noqa: BLE001
            fixed[template.get_id()] = {"error": _error(exc)}
        for record in synthesised_records([template.jinja, template.answer_choices]):
            key = json.dumps(record, sort_keys=True)
            if key not in index:
                index[key] = len(records)
                records.append(record)
            cases.append(_case(template, index[key], record))
    source = path.relative_to(promptsource_root)
    return {
        "dataset": data.get("dataset"),
        "subset": data.get("subset"),
        "source": str(source),
        "fixed_answer_choices": fixed,
        "records": records,
        "cases": cases,
    }


# -- running promptsource ----------------------------------------------------------------------


def _error(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def _case(template, number: int, record: dict) -> dict:
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
    return case


def golden_for(dataset: str, subset, records: list, promptsource_root: Path) -> dict:
    from promptsource.templates import DatasetTemplates

    templates = DatasetTemplates(dataset, subset)
    cases = []
    for template in templates.templates.values():
        for number, record in enumerate(records):
            cases.append(_case(template, number, record))
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

    # every templates.yaml promptsource ships, on synthesised records
    synth_dir = GOLDEN / "synthesised"
    synth_dir.mkdir(exist_ok=True)
    synth_templates = synth_cases = 0
    for path in sorted((promptsource_root / "templates").rglob("templates.yaml")):
        golden = {"generator": {**generator, "records": "synthesised", "variants": list(SYNTH_VARIANTS)}}
        golden.update(synthesised_golden(path, promptsource_root))
        stem = "__".join(Path(golden["source"]).parent.relative_to("templates").parts)
        (synth_dir / f"{stem}.json").write_text(_dumps(golden), encoding="utf-8")
        target = GOLDEN / "templates" / Path(golden["source"]).relative_to("templates")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
        synth_templates += len(golden["fixed_answer_choices"])
        synth_cases += len(golden["cases"])
    print(f"synthesised: {synth_templates} templates, {synth_cases} cases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
