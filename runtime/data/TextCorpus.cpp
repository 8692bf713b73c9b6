// The corpus of `data.builtin: text`: original prose written for attnc, plain ASCII, so that a
// character-level language model has something small to learn and sample from.
#include "attn/data/Text.h"

namespace attn::data {

const std::string &builtinText() {
  static const std::string text = R"(The river begins as a thin line of water high in the hills.
It gathers rain from every slope, and by the time it reaches the valley it is wide and slow.
The people who live beside it measure the year by its moods: the quick cold water of spring,
the lazy green water of summer, the brown floods of autumn, and the quiet ice of winter.

A sequence is a river of symbols. Each letter arrives after the one before it, and the meaning
of a word depends on the letters that came first. A model that reads a sentence one letter at
a time must carry something forward from step to step, a small memory of what it has seen.
That memory is the hidden state. At every step the model mixes the new letter with the old
state and produces a new state, and from the new state it guesses the next letter.

The old teacher said that learning is mostly patience. You read the same page again and
again, and each time the page is a little clearer. The first time you see only shapes. The
second time you see words. The third time you see the thought behind the words, and then you
can say the thought in your own way. A machine learns in much the same manner: it guesses,
it is told how wrong it was, and it changes itself a little so that the next guess is better.

In the morning the market opens early. The baker sets out bread while it is still warm, the
fisherman lays silver fish on a bed of ice, and the old woman who sells apples counts them
twice before she names her price. By noon the square is loud with voices. By evening the
stalls are folded away, and only the pigeons remain to search the stones for crumbs.

Count the steps from the door to the gate: one, two, three, four, five, six, seven, eight,
nine, ten. Count them back again: ten, nine, eight, seven, six, five, four, three, two, one.
A good model of counting knows that after three comes four, and that after nine comes ten.

When the wind turns to the north the boats stay in the harbour. The sailors mend their nets
and tell stories about storms they have seen, and every year the storms in the stories grow a
little larger. The children listen with wide eyes and dream of the sea. Some of them will
become sailors, and some will become bakers, and one or two will become teachers who say
that learning is mostly patience.

The garden is planted in rows. Beans climb their poles, tomatoes hang heavy and red, and the
onions wait under the soil until someone pulls them up. A careful gardener knows which plant
needs water and which needs sun, and she reads the leaves the way a sailor reads the sky.

Every long journey is made of small steps, and every long text is made of small letters.
Read them one at a time, remember what matters, forget what does not, and guess the next one.

The lighthouse keeper climbs the stairs at dusk. There are one hundred and twelve of them,
and she knows each one by the sound it makes under her boots. At the top she trims the wick,
polishes the glass, and lights the lamp. All night the beam turns over the water, and all
night the ships that pass can see where the rocks are and where the safe channel runs.

A map is a model of the land. It leaves out almost everything: the smell of the pine woods,
the colour of the morning, the names of the dogs in the farmyards. What it keeps is what a
traveller needs to find the way. A good model is like a good map. It forgets wisely.

The cook in the small restaurant by the station starts the soup before the sun is up. She
chops onions and carrots and celery, she adds salt and pepper and a little thyme, and she
lets the pot simmer while the first trains arrive. By the time the travellers come in from
the cold, the whole room smells of soup, and nobody can remember why they were in a hurry.

Some words are common and some are rare. The word the appears in almost every sentence,
while a word like lighthouse may appear only once in a long book. A model that reads text one
letter at a time soon learns that a space often follows the letter e, that a capital letter
often follows a full stop, and that the letter q is nearly always followed by the letter u.

In the winter the village is quiet. Snow covers the roads and the roofs, and the only sounds
are the bells of the church and the scrape of shovels in the morning. The children build a
snowman in the square and give it a carrot for a nose and two black stones for eyes. When
spring comes the snowman melts away, and only the carrot and the stones are left behind.

The clock in the tower has kept time for two hundred years. Every Sunday the clockmaker climbs
up to wind it, oils the gears, and checks it against the radio. It is never more than a minute
slow. People in the town set their watches by it, and when it strikes noon the pigeons rise
from the roof all at once and circle the tower before they settle again.
)";
  return text;
}

} // namespace attn::data
