/** What a question asks for (issue 33): the kind of phrase a reader would underline as its answer. */
export const ANSWER_TYPES = ['date', 'quantity', 'person', 'place', 'definition', 'instruction', 'other'] as const;
export type AnswerType = (typeof ANSWER_TYPES)[number];
