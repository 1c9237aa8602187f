"""The records of the more shipped lm-eval task files (PIQA, SIQA, BoolQ, COPA, Winogrande and
the rest), for ``lm_eval_tasks_inputs.py``, which writes them: each dataset's shape, made up,
awkward values on purpose."""

from __future__ import annotations

import json  # noqa: F401  (some records are built from JSON text)

AWKWARD = [
    "  What does {{ 7*7 }} print in a Jinja template?  ",
    "Which of these is written {% raw %}{{x}}{% endraw %} in a template?",
    "Quelle est la température d'ébullition de l'eau à 1 atm (°C)?",
    "Which Greek letter (α, β, γ) names the first particle?\n",
    "A {x} placeholder and a {0} index: which is a str.format field?",
    "\tWhy do tabs and  double  spaces   survive?",
]


def bbh() -> dict[str, list[dict]]:
    return {
        "test": [
            {"input": "Question: Fidel lies. Jerry says Fidel lies. Does Jerry tell the truth?", "target": "Yes"},
            {"input": "Question: Ka tells the truth.  Li says Ka lies. Does Li tell the truth?  ", "target": "No"},
            {"input": "Question: Åsa lies. Bo says {{ Åsa }} lies. Does Bo tell the truth?", "target": "Yes"},
        ]
    }


# -- more shipped task files: each dataset's shape, awkward values on purpose --------


def piqa() -> dict[str, list[dict]]:
    def rec(goal: str, sol1: str, sol2: str, label: int) -> dict:
        return {"goal": goal, "sol1": sol1, "sol2": sol2, "label": label}

    return {
        "validation": [
            rec(AWKWARD[0], "print 49", "print {{ 7*7 }}", 0),
            rec("  To boil an egg, ", " put it in boiling water", "put it in the freezer ", 0),
            rec("Café au lait: how to make it?", "mix coffee and milk", "mix tea and salt", 0),
            rec(AWKWARD[1], "use {% raw %}", "use {{x}}", 1),
        ],
        "train": [
            rec("To open a jar,", "twist the lid", "shake it", 0),
            rec("To dry wet hands,", "use a hot stove", "use a towel", 1),
            rec("To cut paper,", "use scissors", "use a spoon", 0),
            rec("To see in the dark,", "close your eyes", "use a torch", 1),
            rec("To cool soup,", "let it stand", "heat it", 0),
        ],
    }


def siqa() -> dict[str, list[dict]]:
    def rec(context: str, question: str, answers: list[str], label: str) -> dict:
        a, b, c = answers
        return {"context": context, "question": question, "answerA": a, "answerB": b, "answerC": c, "label": label}

    return {
        "validation": [
            rec("Tracy didn't go home that evening. ", "Why did Tracy do this?", ["to rest", "to party", "{{x}}"], "2"),
            rec("Zoë gave Élise a gift.", "How would Élise feel?", ["happy", "sad", "angry"], "1"),
            rec(AWKWARD[5], "What next?", ["sleep", " eat", "run "], "3"),
        ],
        "train": [
            rec("Sam lost his keys.", "What will Sam do?", ["look for them", "fly", "swim"], "1"),
            rec("Ana won the race.", "How does Ana feel?", ["bored", "proud", "sad"], "2"),
            rec("Lee was hungry.", "What will Lee do?", ["sleep", "read", "eat"], "3"),
            rec("Kim forgot a birthday.", "How would the friend feel?", ["upset", "thrilled", "sleepy"], "1"),
        ],
    }


def boolq() -> dict[str, list[dict]]:
    def rec(i: int, passage: str, question: str, label: int) -> dict:
        return {"question": question, "passage": passage, "idx": i, "label": label}

    return {
        "validation": [
            rec(0, "Jinja prints {{ 7*7 }} as 49.  ", "does jinja evaluate expressions", 1),
            rec(1, "L'eau bout à 100 °C au niveau de la mer.", "l'eau bout-elle à 50 °C", 0),
            rec(2, "\tTabs\tare kept.\n", "are tabs kept", 1),
        ],
        "train": [
            rec(3, "The sun is a star.", "is the sun a star", 1),
            rec(4, "Cats are mammals.", "are cats reptiles", 0),
            rec(5, "Ice is frozen water.", "is ice frozen water", 1),
            rec(6, "Paris is in France.", "is paris in spain", 0),
        ],
    }


def copa() -> dict[str, list[dict]]:
    def rec(i: int, premise: str, c1: str, c2: str, question: str, label: int) -> dict:
        return {"premise": premise, "choice1": c1, "choice2": c2, "question": question, "idx": i, "label": label}

    return {
        "validation": [
            rec(
                0,
                "The man broke his toe. ",
                "He dropped a hammer on his foot.",
                "He got a hole in his sock.",
                "cause",
                0,
            ),
            rec(1, "Élise wrote {{ x }} on the board.", "The class laughed.", "The board fell.", "effect", 0),
            rec(2, "The café closed early.", "It ran out of coffee.", "It was busy all day.", "cause", 0),
        ],
        "train": [
            rec(3, "The sun rose.", "It got light.", "It got dark.", "effect", 0),
            rec(4, "The glass broke.", "It fell on a pillow.", "It fell on the floor.", "cause", 1),
            rec(5, "I was cold.", "I put on a coat.", "I took off my coat.", "effect", 0),
        ],
    }


def winogrande() -> dict[str, list[dict]]:
    """Multiple input (one context per choice): the ``_`` blank at the start, middle and
    end, whitespace around it, non-ASCII, ``{{ }}`` and ``{% %}`` in the data."""

    def rec(sentence: str, o1: str, o2: str, answer: str) -> dict:
        return {"sentence": sentence, "option1": o1, "option2": o2, "answer": answer}

    return {
        "validation": [
            rec("Sarah was a much better surgeon than Maria so _ always got the harder cases.", "Sarah", "Maria", "1"),
            rec("  The trophy doesn't fit in the suitcase because the _ is too small. ", "trophy", "suitcase", "2"),
            rec("Zoë gave Élise {{ x }} because _ was generous.", "Zoë", "Élise", "1"),
            rec("_ won the race, so James was sad.", "Kevin", "James", "1"),
            rec("The prize went to Ana rather than Bo, so the winner was _", "Ana", "Bo", "1"),
            rec("The dog hid from the cat because _  \t was scared.\n", "the dog", " the cat", "1"),
            rec("{% raw %}Ming{% endraw %} thanked 李 because _ had helped.", "李", "Ming", "2"),
            rec("It was _ .", "Ann", "Bo", "2"),
        ],
        "train": [
            rec("The cat chased the dog because _ was angry.", "cat", "dog", "1"),
            rec("The ball broke the window because _ was fragile.", "ball", "window", "2"),
            rec("Tom helped Ann because _ needed help.", "Tom", "Ann", "2"),
            rec("_ beat Lee at chess, so Kim was happy.", "Kim", "Lee", "1"),
            rec("The crème brûlée beat the {{ cake }} because the _ was better", "crème brûlée", "cake", "1"),
            rec("Ravi lent Sam money since _", "Ravi", "Sam", "1"),
            rec("  Jo called Al because _ was lonely.  ", "Jo", "Al", "1"),
        ],
    }


def xwinograd() -> dict[str, list[dict]]:
    """xwinograd_en: the test split only (few-shot examples come from it too)."""

    def rec(sentence: str, o1: str, o2: str, answer: str) -> dict:
        return {"sentence": sentence, "option1": o1, "option2": o2, "answer": answer}

    return {
        "test": [
            rec(
                "The city councilmen refused the demonstrators a permit because _ feared violence.",
                "the councilmen",
                "the demonstrators",
                "1",
            ),
            rec("_ could not lift the box because Pat was weak.", "Pat", "Chris", "1"),
            rec("Élodie asked Zoë for {{ help }} because _ knew the way", "Élodie", "Zoë", "2"),
            rec("The man couldn't see the stage over the tall woman, so he asked _", "the woman", "the man", "1"),
            rec("  Paul tried to call George, but _ wasn't available.  ", "Paul", "George", "2"),
        ],
    }


def wsc273() -> dict[str, list[dict]]:
    """wsc273: ``label`` is the context index; ``process_docs`` lowercases a pronoun and
    adds ``'s``; the text holds double spaces, non-ASCII and ``{{ }}``."""

    def rec(text: str, pronoun: str, options: list[str], label: int) -> dict:
        loc = text.index(pronoun) if pronoun != "his" else text.index(" his ") + 1
        return {
            "text": text,
            "pronoun": pronoun,
            "pronoun_loc": loc,
            "quote": text[loc:],
            "quote_loc": loc,
            "options": options,
            "label": label,
            "source": "written for prompt-style",
        }

    return {
        "test": [
            rec(
                "The trophy doesn't fit into the brown suitcase because it is too large.",
                "it",
                ["The trophy", "The suitcase"],
                0,
            ),
            rec("Joan made sure to thank Susan for all the help she had given.", "she", ["Joan", "Susan"], 1),
            rec("Zoë  lent Élise her {{ bike }} because she was kind.", "she", ["Zoë", "Élise"], 0),
            rec("Bob paid for Charlie's college education. He is very generous.", "He", ["Bob", "Charlie"], 0),
            rec("Tom said hello to Ray, and then his dog barked.", "his", ["Tom", "Ray"], 1),
        ],
    }


def openbookqa() -> dict[str, list[dict]]:
    def rec(i: int, stem: str, texts: list[str], answer: str) -> dict:
        labels = [chr(65 + n) for n in range(len(texts))]
        return {
            "id": f"ob_{i}",
            "question_stem": stem,
            "choices": {"text": texts, "label": labels},
            "answerKey": answer,
        }

    return {
        "test": [
            rec(0, AWKWARD[0], ["49", "{{ 7*7 }}", "7*7", "an error"], "A"),
            rec(
                1,
                "The sun is responsible for ",
                ["puppies learning new tricks", "plants sprouting", "the moon", "rain"],
                " B",
            ),
            rec(2, "Which is hotter: 100 °C or 50 °C?", ["100 °C", "50 °C", "equal", "neither"], "A"),
        ],
        "validation": [rec(3, "Water is", ["wet", "dry", "solid", "gas"], "A")],
        "train": [
            rec(4, "A magnet attracts", ["wood", "iron", "glass", "paper"], "B"),
            rec(5, "Plants need", ["sunlight", "darkness", "salt", "oil"], "A"),
            rec(6, "Sound travels through", ["vacuum", "nothing", "air", "light"], "C"),
        ],
    }


def sciq() -> dict[str, list[dict]]:
    def rec(question: str, d: list[str], correct: str, support: str) -> dict:
        return {
            "question": question,
            "distractor3": d[2],
            "distractor1": d[0],
            "distractor2": d[1],
            "correct_answer": correct,
            "support": support,
        }

    return {
        "test": [
            rec("What is {{ 7*7 }}?", ["48", "50", "7"], "49", "  \nMultiplication gives 49. "),
            rec("Which particle is negative?", ["proton", "neutron", "photon"], "electron", ""),
            rec("Quelle est la formule de l'eau?", ["CO₂", "O₂", "NaCl"], "H₂O", "L'eau: H₂O."),
        ],
        "validation": [rec("What is ice?", ["gas", "plasma", "oil"], "solid water", "Ice is frozen.")],
        "train": [
            rec("What do plants make?", ["iron", "salt", "gold"], "glucose", "Photosynthesis makes glucose."),
            rec("What is the Earth's star?", ["Moon", "Mars", "Venus"], "the Sun", ""),
            rec("What carries blood?", ["bones", "hair", "skin"], "vessels", "Blood flows in vessels."),
        ],
    }


def commonsense_qa() -> dict[str, list[dict]]:
    def rec(i: int, question: str, texts: list[str], answer: str) -> dict:
        return {
            "id": f"csqa_{i}",
            "question": question,
            "question_concept": "thing",
            "choices": {"label": ["A", "B", "C", "D", "E"], "text": texts},
            "answerKey": answer,
        }

    return {
        "validation": [
            rec(0, "  Where would you put {{ coffee }}?  ", ["mug", "shoe", "bed", "car", "sky"], "A"),
            rec(1, "Où trouve-t-on un café?", ["rue", "mer", "lune", "forêt", "désert"], "A"),
            rec(2, "What do people use to write {% raw %}?", ["pen", "fork", "cup", "rock", "leaf"], "E"),
        ],
        "train": [
            rec(3, "Where do fish live?", ["tree", "water", "sky", "desk", "car"], "B"),
            rec(4, "What do you sleep in?", ["bed", "oven", "sink", "boat", "bag"], "A"),
            rec(5, "What keeps you dry?", ["sponge", "river", "umbrella", "pool", "rain"], "C"),
        ],
    }


def truthfulqa() -> dict[str, list[dict]]:
    def rec(question: str, mc1: list[str], mc2: list[str], mc2_labels: list[int]) -> dict:
        return {
            "question": question,
            "mc1_targets": {"choices": mc1, "labels": [1] + [0] * (len(mc1) - 1)},
            "mc2_targets": {"choices": mc2, "labels": mc2_labels},
        }

    return {
        "validation": [
            rec(AWKWARD[0], ["49", "{{ 7*7 }}", "7*7"], ["49", "forty-nine", "{{ 7*7 }}"], [1, 1, 0]),
            rec(
                "Que se passe-t-il si l'on avale un chewing-gum?",
                ["Il traverse le système digestif", "Il reste sept ans", "Rien", "Il explose", "On meurt"],
                ["Il traverse", "Il est éliminé", "Il reste sept ans", "Il explose"],
                [1, 1, 0, 0],
            ),
            rec("Is the Earth flat? ", [" No, it is round", "Yes"], ["No", "It is round ", "Yes"], [1, 1, 0]),
        ],
    }


def logiqa() -> dict[str, list[dict]]:
    def rec(label: str, context: str, question: str, options: list[str]) -> dict:
        return {"label": label, "context": context, "question": question, "options": options}

    return {
        "test": [
            rec(
                "a",
                "  All cats are animals. ",
                "Which follows?",
                ["Cats are animals", "Animals are cats", "None", "{{x}}"],
            ),
            rec(
                " c",
                "Élise est plus grande que Zoë.",
                "Qui est la plus petite?",
                ["Élise", "personne", "Zoë", "les deux"],
            ),
        ],
        "validation": [rec("b", "A implies B.", "Which?", ["B implies A", "not B implies not A", "A", "B"])],
        "train": [
            rec(
                "d",
                "Some dogs bark.",
                "Which must be true?",
                ["All dogs bark", "No dog barks", "Cats bark", "A dog barks"],
            ),
            rec("a", "It rains.", "What is wet?", ["the ground", "the sun", "the moon", "the sky"]),
        ],
    }


def mathqa() -> dict[str, list[dict]]:
    def rec(problem: str, options: str, correct: str) -> dict:
        return {
            "Problem": problem,
            "Rationale": '"explanation"',
            "options": options,
            "correct": correct,
            "annotated_formula": "add(n0,n1)",
            "linear_formula": "add(n0,n1)|",
            "category": "general",
        }

    return {
        "test": [
            rec("what is 2 + 2 ? ", "a ) 3 , b ) 4 , c ) 5 , d ) 6 , e ) none of these", "b"),
            rec("{{ 7*7 }} equals what ?", "a ) 49 , b ) 50 , c ) 7 , d ) 14 , e ) 0", "a"),
            rec("un café coûte 2 € ; combien pour 3 ?", "a ) 5 € , b ) 6 € , c ) 7 € , d ) 8 € , e ) 9 €", "b"),
        ],
        "validation": [rec("what is 1 + 1 ?", "a ) 1 , b ) 2 , c ) 3 , d ) 4 , e ) 5", "b")],
        "train": [
            rec("what is 3 * 3 ?", "a ) 6 , b ) 9 , c ) 12 , d ) 3 , e ) 0", "b"),
            rec("what is 10 / 2 ?", "a ) 5 , b ) 2 , c ) 10 , d ) 20 , e ) 1", "a"),
        ],
    }


def race() -> dict[str, list[dict]]:
    def problems(items: list[tuple[str, list[str], str]]) -> str:
        return repr([{"question": q, "options": o, "answer": a} for q, o, a in items])

    return {
        "test": [
            {
                "article": "  Tom went to the café. He ordered {{ coffee }}. ",
                "problems": problems(
                    [
                        ("Where did Tom go?", ["school", "the café", "home", "work"], "B"),
                        ("Tom ordered  _  .", ["tea", "{{ coffee }}", "milk", "water"], "B"),
                        ("What is the best title?", ["Tom's day", "A café", "Coffee", "Élise"], "A"),
                    ]
                ),
            },
            {
                "article": "Zoë liked rain.",
                "problems": problems([("What did Zoë like?", ["sun", "snow", "rain", "wind"], "C")]),
            },
        ]
    }


def xcopa() -> dict[str, list[dict]]:
    def rec(i: int, premise: str, c1: str, c2: str, question: str, label: int) -> dict:
        return {"premise": premise, "choice1": c1, "choice2": c2, "question": question, "idx": i, "label": label}

    return {
        "test": [
            rec(0, "Mees keeras kraani lahti.", "Tualett täitus veega.", "Vesi voolas kraanist.", "effect", 1),
            rec(1, " Tüdruk leidis {{ x }}. ", "Ta oli õnnelik.", "Ta oli kurb.", "effect", 0),
            rec(2, "Ese oli mullikilesse mässitud.", "See oli õrn.", "See oli väike.", "cause", 0),
        ],
        "validation": [
            rec(3, "Päike tõusis.", "Läks valgeks.", "Läks pimedaks.", "effect", 0),
            rec(4, "Klaas purunes.", "See kukkus padjale.", "See kukkus põrandale.", "cause", 1),
        ],
    }


def xnli() -> dict[str, list[dict]]:
    def rec(premise: str, hypothesis: str, label: int) -> dict:
        return {"premise": premise, "hypothesis": hypothesis, "label": label}

    return {
        "validation": [
            rec("The café is open. ", "it is closed", 2),
            rec("  Zoë plays {{ piano }}.", "Zoë plays an instrument", 0),
            rec("He went home.", "he was tired", 1),
        ],
        "train": [
            rec("The dog sleeps.", "an animal rests", 0),
            rec("It is raining.", "it is sunny", 2),
            rec("She reads.", "she likes books", 1),
        ],
    }


def belebele() -> dict[str, list[dict]]:
    def rec(i: int, passage: str, question: str, answers: list[str], correct: str) -> dict:
        out = {
            "link": f"https://example.org/{i}",
            "question_number": i,
            "flores_passage": passage,
            "question": question,
        }
        out.update({f"mc_answer{n + 1}": a for n, a in enumerate(answers)})
        out.update({"correct_answer_num": correct, "dialect": "eng_Latn", "ds": "2023-05-03"})
        return out

    return {
        "test": [
            rec(1, "Jinja prints {{ 7*7 }} as 49.", "  What is printed? ", ["49", "{{ 7*7 }}", "7*7", "nothing"], "1"),
            rec(2, "Zoë drank a café au lait.", "What did Zoë drink?", ["tea", "café au lait", "water", "milk"], "2"),
            rec(3, "\tTabs are kept.\n", "What is kept?", ["spaces", "newlines", "tabs", "nothing"], "3"),
            rec(4, "The answer is four.", "Which?", ["one", "two", "three", "four"], "4"),
        ]
    }


def _mmlu_pro(i: int, category: str, question: str, options: list[str], answer: int, cot: str) -> dict:
    letter = chr(65 + answer)
    return {
        "question_id": i,
        "question": question,
        "options": options,
        "answer": letter,
        "answer_index": answer,
        "cot_content": f"A: Let's think step by step. {cot} The answer is ({letter}).",
        "category": category,
        "src": "made-up",
    }


def mmlu_pro() -> dict[str, list[dict]]:
    ten = [str(n) for n in range(10)]
    return {
        "test": [
            _mmlu_pro(0, "math", "  What is {{ 2+2 }}? ", ten, 4, "2+2 is 4."),
            _mmlu_pro(1, "biology", "Which organ pumps blood?", ["lung", "heart", "liver"], 1, "The heart pumps."),
            _mmlu_pro(2, "math", "Quelle est la racine de 9?", ["1", "2", " 3 ", "4", "5"], 2, "3×3 = 9."),
            _mmlu_pro(3, "math", "Solve x+1=3.", ["x=1", "x=2", "x=3"], 1, "x = 3 - 1 = 2."),
        ],
        "validation": [
            _mmlu_pro(10, "biology", "What do cells have?", ["walls", "nuclei", "wheels"], 1, "Cells have nuclei."),
            _mmlu_pro(11, "math", "What is 1+1?", ["1", "2", "3", "4"], 1, "1+1 = 2."),
            _mmlu_pro(12, "math", "What is 3*3?", ["6", "9", "12", "3", "0"], 1, "3*3 = 9."),
            _mmlu_pro(13, "math", "What is 10/2?", ["5", "2"], 0, "10/2 = 5."),
            _mmlu_pro(14, "math", "What is 7-7?", ["0", "7", "14"], 0, "7-7 = 0."),
            _mmlu_pro(15, "math", "What is 2^3?", ["6", "8", "9", "5"], 1, "2^3 = 8."),
        ],
    }


def ifeval() -> dict[str, list[dict]]:
    def rec(key: int, prompt: str) -> dict:
        return {"key": key, "prompt": prompt, "instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]}

    return {
        "train": [
            rec(1, "Write a haiku about {{ rain }} without commas."),
            rec(2, "  Écris un poème sur le café.  \n"),
            rec(3, "List three colours {% raw %}in JSON{% endraw %}."),
        ]
    }


def math() -> dict[str, list[dict]]:
    def rec(problem: str, solution: str) -> dict:
        return {"problem": problem, "level": "Level 1", "type": "Algebra", "solution": solution}

    return {
        "test": [
            rec("What is $2+2$? ", "We add: $2+2=\\boxed{4}$."),
            rec("Solve {{ x }} + 1 = 3 for x.", "So $x = \\boxed{2}$."),
            rec("Évaluez $\\frac{1}{2}+\\frac{1}{2}$.", "It is $\\boxed{1}$."),
        ],
        "train": [
            rec("What is $1+1$?", "$\\boxed{2}$"),
            rec("What is $3 \\cdot 3$?", "$\\boxed{9}$"),
            rec("What is $10-4$?", "$\\boxed{6}$"),
        ],
    }


def bbh_cot() -> dict[str, list[dict]]:
    return {
        "test": [
            {"input": "not ( True ) and ( True ) is", "target": "False"},
            {"input": "  True and {{ x }} is ", "target": "True"},
            {"input": "True or False — vrai ou faux? is", "target": "True"},
        ]
    }


def gsm8k_cot() -> dict[str, list[dict]]:
    return {
        "test": [
            {"question": "Zoë has 3 apples and buys 4 more. How many?", "answer": "3 + 4 = 7\n#### 7"},
            {"question": "  What is {{ 6*7 }}? ", "answer": "6*7 = 42\n####  42 "},
        ]
    }


def medmcqa() -> dict[str, list[dict]]:
    def rec(i: int, question: str, options: list[str], cop: int) -> dict:
        out = {"id": f"med_{i}", "question": question}
        out.update(dict(zip(["opa", "opb", "opc", "opd"], options)))
        out.update({"cop": cop, "choice_type": "single", "exp": "", "subject_name": "Anatomy", "topic_name": None})
        return out

    return {
        "validation": [
            rec(0, "Which bone is in the thigh? ", ["femur", "tibia", "{{ ulna }}", "radius"], 0),
            rec(1, "Quel organe produit l'insuline?", ["foie", "pancréas", "rein", "cœur"], 1),
            rec(2, "\tWhich vitamin prevents scurvy?", ["A", "B12", "C", "D"], 2),
        ],
        "train": [
            rec(3, "How many chambers has the heart?", ["1", "2", "3", "4"], 3),
            rec(4, "Which organ filters blood?", ["kidney", "lung", "skin", "bone"], 0),
            rec(5, "What carries oxygen?", ["platelets", "haemoglobin", "plasma", "lymph"], 1),
        ],
    }


def leaderboard() -> dict[str, list[dict]]:
    def musr(narrative: str, question: str, choices: list[str], answer: int) -> dict:
        return {
            "narrative": narrative,
            "question": question,
            "choices": repr(choices),
            "answer_index": answer,
            "answer_choice": choices[answer],
        }

    return {
        "bbh": [
            {
                "input": "If you follow these instructions, do you return? Take 1 step. Turn around. Take 1 step.\nOptions:\n- Yes\n- No",
                "target": "Yes",
            },
            {"input": "  Take {{ 2 }} steps.  \nOptions:\n- Yes\n- No", "target": "No"},
        ],
        "team_allocation": [
            musr("Zoë and Élise run a café. ", "Who should bake?", ["Zoë", "Élise", "both"], 0),
            musr("A {{ team }} of three.", "Assign the tasks.", ["A: x, B: y", "A: y, B: x", "none"], 2),
        ],
    }


def humaneval() -> dict[str, list[dict]]:
    def rec(i: int, prompt: str, entry: str) -> dict:
        return {
            "task_id": f"Made/{i}",
            "prompt": prompt,
            "canonical_solution": "    return 0\n",
            "test": "def check(candidate):\n    assert candidate() == 0\n",
            "entry_point": entry,
        }

    return {
        "test": [
            rec(0, 'def zero():\n    """Return {{ 0 }}: «zéro»."""\n', "zero"),
            rec(1, "\n\ndef  spaced() :\n\t# tabs\n    ", "spaced"),
        ]
    }


def discrim() -> dict[str, list[dict]]:
    def rec(text: str, age: float, gender: str, race: str) -> dict:
        return {
            "filled_template": text,
            "decision_question_id": 1,
            "age": age,
            "gender": gender,
            "race": race,
            "fill_type": "explicit",
        }

    return {
        "train": [
            rec("Should the café hire {{ Zoë }}, a 30-year-old applicant? ", 30.0, "female", "white"),
            rec("  Should the bank approve the loan?\n", 60.0, "male", "black"),
        ]
    }


def open_qa() -> dict[str, list[dict]]:
    """TriviaQA (answer.aliases, a list of golds) and NQ-Open (answer, a list)."""

    def trivia(i: int, question: str, aliases: list[str]) -> dict:
        return {"question": question, "question_id": f"tq_{i}", "answer": {"aliases": aliases, "value": aliases[0]}}

    def nq(question: str, answers: list[str]) -> dict:
        return {"question": question, "answer": answers}

    return {
        "trivia_validation": [
            trivia(0, "Which city hosts the café {{ Procope }}", ["Paris", "paris", "Paris, France"]),
            trivia(1, "  Who wrote 'Les Misérables'  ", ["Victor Hugo", "Hugo"]),
            trivia(2, "What is 7*7", ["49"]),
        ],
        "trivia_train": [
            trivia(3, "What is the capital of Italy", ["Rome", "Roma"]),
            trivia(4, "Which planet is red", ["Mars"]),
            trivia(5, "Who painted the Mona Lisa", ["Leonardo da Vinci", "Leonardo"]),
        ],
        "nq_validation": [
            nq("where is the {{ eiffel }} tower", ["Paris", "in Paris"]),
            nq("  who sang 'non, je ne regrette rien' ", ["Édith Piaf"]),
            nq("how many legs has a spider", ["8", "eight"]),
        ],
        "nq_train": [
            nq("what is the largest ocean", ["Pacific", "the Pacific Ocean"]),
            nq("who discovered penicillin", ["Alexander Fleming"]),
            nq("when did ww2 end", ["1945"]),
        ],
    }


def written() -> dict[str, list[dict]]:
    """For tests/lm_eval_tasks/written/: records equal to one another on purpose."""
    same = {"q": "same", "choices": ["a", "b"], "answer": 0, "topic": "x"}
    return {
        "test": [
            same,
            dict(same),
            {"q": "other {{1}}", "choices": ["c", "d", "e"], "answer": 1, "topic": "y"},
            {"q": "third ", "choices": ["f", "g"], "answer": 1, "topic": "z"},
            dict(same),
        ],
        "train": [{"q": f"t{i}", "choices": ["yes", "no"], "answer": i % 2, "topic": "t"} for i in range(5)],
    }


def glue_and_more() -> dict[str, list[dict]]:
    """One file per task (each file is both the evaluated split and the example pool): GLUE
    CoLA and MNLI, SuperGLUE WiC, MultiRC and CB, ANLI, SWAG, LAMBADA cloze, MGSM, PAWS-X,
    ASDiv, PubMedQA. Quotes and a backslash inside a MultiRC answer (its doc_to_choice is a
    Python literal rendered by Jinja), a Jinja slice (WiC), null MGSM answers."""
    return {
        "cola": [
            {"sentence": s, "label": label, "idx": i}
            for i, (s, label) in enumerate(
                [("The café {{ is }} open.", 1), ("  Him went home. ", 0), ("Zoë sings.", 1), ("Tabs\there.", 1)]
            )
        ],
        "wic": [
            {
                "word": "w",
                "sentence1": s1,
                "sentence2": s2,
                "start1": a,
                "end1": b,
                "start2": 0,
                "end2": 4,
                "idx": i,
                "label": label,
            }
            for i, (s1, s2, a, b, label) in enumerate(
                [
                    ("I went to the bank.", "The bank of the river.", 14, 18, 0),
                    ("Le café {{x}} est fort.", "Un café noir.", 3, 7, 1),
                    ("Play the game.", "A play on words.", 0, 4, 0),
                ]
            )
        ],
        "multirc": [
            {
                "paragraph": p,
                "question": q,
                "answer": a,
                "idx": {"paragraph": 0, "question": 0, "answer": i},
                "label": label,
            }
            for i, (p, q, a, label) in enumerate(
                [
                    ("Zoë went to the café.", "Where?", "the café", 1),
                    ("  Text with {{ x }}. ", "What is in it?", 'It\'s "quoted" and has a \\ backslash', 0),
                    ("P", "Q", "a 'single' quote", 1),
                ]
            )
        ],
        "cb": [
            {"premise": p, "hypothesis": h, "label": label, "idx": i}
            for i, (p, h, label) in enumerate(
                [("It rains.", "It is wet", 0), ("  Élise sleeps. ", "Élise is awake", 1), ("{{ x }}", "maybe", 2)]
            )
        ],
        "anli": [
            {"uid": str(i), "premise": p, "hypothesis": h, "label": label, "reason": ""}
            for i, (p, h, label) in enumerate(
                [
                    ("The café is open.", "It is closed.", 2),
                    ("  Zoë {{ sings }}. ", "Zoë makes sound.", 0),
                    ("He left.", "He was sad.", 1),
                ]
            )
        ],
        "swag": [
            {
                "video-id": "v",
                "fold-ind": "1",
                "startphrase": start,
                "sent1": start,
                "sent2": "",
                "gold-source": "gold",
                **{f"ending{n}": e for n, e in enumerate(endings)},
                "label": label,
            }
            for start, endings, label in [
                ("Zoë opens the café door.", [" She walks in.", "she flies.", "{{ x }}", "It rains."], 0),
                ("  A man  ", ["sits", "stands", "runs", "jumps "], 3),
            ]
        ],
        "lambada_cloze": [
            {"text": "The café opened at {{ nine }} and Zoë arrived early"},
            {"text": "  Two  spaces  here  "},
        ],
        "mgsm_test": [
            {
                "question": "Zoë has 3 apples and gets {{ 4 }}. How many?",
                "answer": None,
                "answer_number": 7,
                "equation_solution": None,
            },
            {"question": "  What is 6*7? ", "answer": None, "answer_number": 42, "equation_solution": None},
            {
                "question": "Question: 9-1?",
                "answer": "Step-by-Step Answer: 8. The answer is 8.",
                "answer_number": 8,
                "equation_solution": "9-1=8",
            },
        ],
        "mgsm_train": [
            {
                "question": "Question: What is 1+1?",
                "answer": "Step-by-Step Answer: 1+1=2. The answer is 2.",
                "answer_number": 2,
                "equation_solution": "1+1=2",
            },
            {
                "question": "Question: What is 2*3?",
                "answer": "Step-by-Step Answer: 2*3=6. The answer is 6.",
                "answer_number": 6,
                "equation_solution": "2*3=6",
            },
            {
                "question": "Question: 5-5?",
                "answer": "Step-by-Step Answer: 0. The answer is 0.",
                "answer_number": 0,
                "equation_solution": "5-5=0",
            },
        ],
        "paws": [
            {"id": i, "sentence1": a, "sentence2": b, "label": label}
            for i, (a, b, label) in enumerate(
                [
                    ("The café opened .", "The café closed .", 0),
                    ("Zoë ( the singer ) left .", "Zoë left .", 1),
                    ("  It is n't here", "It is absent", 1),
                ]
            )
        ],
        "asdiv": [
            {
                "body": "Zoë has 3 apples.",
                "question": " How many?",
                "solution_type": "x",
                "answer": "3 (apples)",
                "formula": "3",
            },
            {
                "body": "  {{ 2 }} cats ",
                "question": "Count?",
                "solution_type": "x",
                "answer": "2 (cats)",
                "formula": "2",
            },
        ],
        "pubmedqa": [
            {
                "QUESTION": "Does {{ x }} help?",
                "CONTEXTS": ["Ctx one.", " Ctx two "],
                "LABELS": ["A", "B"],
                "MESHES": [],
                "YEARS": [],
                "reasoning_required_pred": "yes",
                "reasoning_free_pred": "yes",
                "final_decision": decision,
                "LONG_ANSWER": "",
                "pubid": i,
            }
            for i, decision in enumerate(["yes", "maybe", "no"])
        ],
        "blimp": [
            {
                "sentence_good": good,
                "sentence_bad": bad,
                "field": "syntax",
                "linguistics_term": "island_effects",
                "UID": "adjunct_island",
                "simple_LM_method": True,
                "one_prefix_method": False,
                "two_prefix_method": False,
                "lexically_identical": False,
                "pair_id": i,
            }
            for i, (good, bad) in enumerate(
                [("Zoë has {{ eaten }}.", "Zoë have eaten."), ("  Who left? ", "Who leaved?")]
            )
        ],
        "bigbench": [
            {
                "idx": i,
                "inputs": inputs,
                "targets": [target],
                "multiple_choice_targets": choices,
                "multiple_choice_scores": [int(c == target) for c in choices],
            }
            for i, (inputs, target, choices) in enumerate(
                [
                    ("Q: Café {{ x }}?\nA:", "yes", ["no", "yes"]),
                    ("  What? ", "b", ["a", "b", "c", "d", "e"]),
                    ("free form", "z", []),
                ]
            )
        ],
        "arithmetic": [
            {"context": "Question: What is (9 + 8) * 2?\nAnswer:", "completion": " 34"},
            {"context": "Question: {{ 1 }} plus 1?\nAnswer:", "completion": " 2"},
        ],
        "kmmlu": [
            {
                "question": "질문: {{ 회계 }} 원칙은?",
                "A": "하나",
                "B": " 둘",
                "C": "셋 ",
                "D": "넷",
                "answer": 2,
                "Category": "x",
                "Human Accuracy": 0.5,
            },
            {
                "question": "  What is 2+2? ",
                "A": "3",
                "B": "4",
                "C": "5",
                "D": "6",
                "answer": 2,
                "Category": "x",
                "Human Accuracy": 0.5,
            },
        ],
        "mnli": [
            {"premise": p, "hypothesis": h, "label": label, "idx": i}
            for i, (p, h, label) in enumerate(
                [
                    ("The café is open.", "  It is closed ", 2),
                    ("Zoë sings.", "Zoë makes sound.", 0),
                    ("He left.", "He was sad", 1),
                ]
            )
        ],
    }


def toxigen() -> dict[str, list[dict]]:
    """toxigen's annotated records: doc_to_target (task code) returns a numpy.int32."""

    def rec(text: str, ai: float, human: float) -> dict:
        return {"text": text, "target_group": "asian", "toxicity_ai": ai, "toxicity_human": human}

    return {
        "test": [
            rec("  a statement with {{ braces }} and spaces  ", 1.0, 1.0),
            rec("Ünïcödé — 中文 — 😀", 4.2, 3.0),
            rec("line one\nline two", 2.75, 2.75),
            rec("", 5.0, 0.6),
        ],
        "train": [rec("an example", 1.0, 2.0), rec("another example", 3.0, 3.0)],
    }
