/**
 * Twelve rivers, three plain sections of three passages each: no links (so no link pairs), and
 * sections of several passages (so cloze questions with a gold of their own). The corpus the tune's
 * tests run `dhr tune` on, locally and over a server.
 */
const RIVERS = ['Rhine', 'Danube', 'Elbe', 'Oder', 'Vistula', 'Loire', 'Seine', 'Rhone', 'Po', 'Tagus', 'Ebro', 'Thames'];
const TOPICS = [
  ['Course', 'rises in the mountains and flows past farms, forests and old market towns before it reaches the sea at a wide estuary.'],
  ['Trade', 'carried grain, timber and salt on barges for centuries, and its ports grew rich on the tolls that merchants paid.'],
  ['Wildlife', 'shelters salmon, otters and herons along its banks, where reed beds and flooded meadows make room for nesting birds.'],
];

export const RIVER_DOCS = RIVERS.map((name) => ({
  key: name.toLowerCase(),
  title: `The ${name}`,
  abstract: `The ${name} is a river of Europe. Its basin holds cities, farmland and wetlands of many kinds.`,
  sections: TOPICS.map(([title, text]) => ({
    title,
    text: [1, 2, 3]
      .map((i) => `Part ${i} about the ${name}: the ${name} ${text} Local people tell many stories of the ${name} and its ${title.toLowerCase()}.`)
      .join('\n\n'),
  })),
}));
