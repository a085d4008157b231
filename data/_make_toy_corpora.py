"""Generate ``toy_en.txt`` and ``toy_zh.txt``, nlpfeat's toy corpora (run once; output committed).

Usage: ``python data/_make_toy_corpora.py`` rewrites both files next to this script.
The output is deterministic (a fixed seed), so rerunning it reproduces the committed files.

Each topic has hand-written sentences plus templates. A template slot holding a list of
words is filled with one of them; a slot holding a list of *pairs* is an antonym slot: the
template is emitted once for each member of the pair with every other slot unchanged, so
antonyms (good/bad, hot/cold, 好/坏, 冷/热, ...) occur in identical contexts, which is what
the PMI / distributional-similarity demos need. Output lines: ``sentence<TAB>topic``;
the classic sentences of the attention literature come first, then the rest in random order.
"""
import itertools
import random
from pathlib import Path

SEED = 20240
FILLS_PER_TEMPLATE = 6

EN_CLASSICS = [
    ("the fat cat sat on the mat", "animals"),
    ("the cat sat on the mat", "animals"),
    ("the quick brown fox jumps over the lazy dog", "animals"),
    ("the animal didn't cross the street because it was too tired", "animals"),
    ("the animal didn't cross the street because it was too wide", "animals"),
    ("this is a good person", "people"),
    ("this is a bad person", "people"),
    ("alice and bob went to the party, the former chatted all evening, "
     "the latter ignored the former and tasted the food with great care", "people"),
    ("the king and the queen ruled the country together", "people"),
    ("the man and the woman walked to the market", "people"),
    ("the prince is the son of the king and the princess is the daughter of the queen",
     "people"),
    ("the agreement on the european economic area was signed in august 1992", "economy"),
    ("attention lets the model focus on the most relevant words of the sentence", "technology"),
]

EN_TEMPLATES = {
    "animals": [
        ("the {size} {animal} sat on the {thing}",
         {"size": [("big", "small"), ("fat", "thin")],
          "animal": ["cat", "dog", "rabbit", "puppy", "kitten"],
          "thing": ["mat", "sofa", "rug", "bed", "chair"]}),
        ("a {color} {animal} slept in the {place}",
         {"color": [("black", "white")], "animal": ["cat", "dog", "horse", "rabbit", "sheep"],
          "place": ["barn", "garden", "field", "yard"]}),
        ("the {hunter} chased the {prey} around the {place}",
         {"hunter": ["cat", "dog", "fox", "owl"], "prey": ["mouse", "bird", "rabbit", "squirrel"],
          "place": ["garden", "farm", "barn", "house"]}),
        ("the farmer's {adj} {animal} works in the fields every day",
         {"adj": [("strong", "weak"), ("young", "old")],
          "animal": ["horse", "ox", "donkey", "dog", "camel"]}),
        ("the farmer fed the {animal}s {food} every morning",
         {"animal": ["horse", "cow", "pig", "chicken", "goat"],
          "food": ["hay", "grain", "corn", "apples"]}),
        ("this {animal} runs very {speed} across the meadow",
         {"animal": ["horse", "dog", "rabbit", "deer", "pony"], "speed": [("fast", "slowly")]}),
    ],
    "food": [
        ("she cooked {dish} with fresh {ingredient} for dinner",
         {"dish": ["soup", "pasta", "rice", "noodles", "curry"],
          "ingredient": ["tomatoes", "garlic", "onions", "mushrooms", "spinach"]}),
        ("the {dish} at this restaurant is {quality}",
         {"dish": ["pizza", "soup", "bread", "coffee", "cake", "fish"],
          "quality": [("good", "bad")]}),
        ("we ordered a {temp} {drink} and a slice of {cake}",
         {"temp": [("hot", "cold")], "drink": ["tea", "coffee", "chocolate", "milk"],
          "cake": ["apple pie", "cheesecake", "lemon cake", "chocolate cake"]}),
        ("add {ingredient} and {spice} to the {dish} and cook it slowly",
         {"ingredient": ["onions", "garlic", "carrots", "beans"],
          "spice": ["salt", "pepper", "ginger", "cinnamon", "chili"],
          "dish": ["soup", "sauce", "stew", "curry"]}),
        ("{fruit} and {fruit2} are {price} at the market in summer",
         {"fruit": ["apples", "strawberries", "peaches", "cherries"],
          "fruit2": ["grapes", "melons", "plums", "pears"], "price": [("cheap", "expensive")]}),
        ("the baker sells {state} bread and {pastry} every morning",
         {"state": [("fresh", "stale")], "pastry": ["croissants", "muffins", "cakes", "pies"]}),
    ],
    "weather": [
        ("the weather is {temp} today in {city}",
         {"temp": [("hot", "cold")],
          "city": ["london", "paris", "sydney", "beijing", "moscow", "cairo", "toronto"]}),
        ("a {force} wind blew from the {direction} all night",
         {"force": [("strong", "weak")], "direction": ["north", "south", "east", "west", "sea"]}),
        ("heavy {precip} fell on {city} and the roads were closed",
         {"precip": ["rain", "snow", "hail"],
          "city": ["london", "paris", "sydney", "beijing", "moscow", "toronto"]}),
        ("this year the {season} in {city} was very {temp}",
         {"season": ["summer", "winter", "spring", "autumn"],
          "city": ["london", "paris", "sydney", "beijing", "moscow", "cairo"],
          "temp": [("hot", "cold"), ("wet", "dry")]}),
        ("forecasters expect {weather} and {level} temperatures in the {region} tomorrow",
         {"weather": ["clouds", "wind", "showers", "fog"], "level": [("high", "low")],
          "region": ["north", "south", "mountains", "valley", "coastal towns"]}),
        ("the water in the river was {level} in {month}",
         {"level": [("high", "low")], "month": ["march", "june", "september", "december"]}),
    ],
    "sports": [
        ("{team} beat {team2} {score} in the {event}",
         {"team": ["rovers", "rangers", "united", "athletic"],
          "team2": ["city", "wanderers", "albion", "county"],
          "score": ["two nil", "three one", "one nil", "four two"],
          "event": ["final", "semi final", "league match", "cup match"]}),
        ("the {force} team lost the match in the final minutes",
         {"force": [("strong", "weak")]}),
        ("the {player} played a {quality} game in the second half",
         {"player": ["striker", "goalkeeper", "captain", "midfielder", "defender"],
          "quality": [("good", "bad")]}),
        ("{athlete}s train every morning before the {competition}",
         {"athlete": ["runner", "swimmer", "cyclist", "boxer", "skier"],
          "competition": ["olympics", "championship", "marathon", "new season", "race"]}),
        ("the {speed} runner finished the {race} in {place} place",
         {"speed": [("fast", "slow")], "race": ["marathon", "sprint", "relay", "race"],
          "place": ["first", "second", "third", "last"]}),
        ("fans cheered as {team} won the {trophy} after a {quality} season",
         {"team": ["rovers", "rangers", "united", "athletic"],
          "trophy": ["cup", "league", "title", "championship"], "quality": [("good", "bad")]}),
    ],
    "economy": [
        ("the {wealth} country borrowed money from the {lender}",
         {"wealth": [("rich", "poor")],
          "lender": ["world bank", "central bank", "international monetary fund",
                     "foreign banks"]}),
        ("shares in the {company} {move} sharply after {news}",
         {"company": ["bank", "airline", "oil company", "mining company", "retailer"],
          "move": [("rose", "fell")],
          "news": ["the annual report", "the interest rate decision", "the election",
                   "the merger"]}),
        ("the central bank raised interest rates to fight {problem}",
         {"problem": ["inflation", "rising prices", "a falling currency", "high inflation"]}),
        ("{wealth} families spend most of their income on {item}",
         {"wealth": [("rich", "poor")],
          "item": ["housing", "food", "rent", "education", "transport"]}),
        ("for the {market} this is {quality} news",
         {"market": ["stock market", "housing market", "exporters", "banks", "investors"],
          "quality": [("good", "bad")]}),
        ("prices of {commodity} were {level} this month",
         {"commodity": ["oil", "gold", "wheat", "copper", "steel"], "level": [("high", "low")]}),
        ("the government cut taxes on {item} to help small businesses",
         {"item": ["fuel", "imports", "profits", "wages", "property"]}),
    ],
    "technology": [
        ("the new {device} has a {size} screen and a long battery life",
         {"device": ["phone", "laptop", "tablet", "camera", "watch"],
          "size": [("big", "small")]}),
        ("the {device} has a {speed} processor and plenty of memory",
         {"device": ["computer", "server", "laptop", "phone"], "speed": [("fast", "slow")]}),
        ("engineers trained a {model} on {data}",
         {"model": ["neural network", "language model", "transformer", "classifier"],
          "data": ["millions of sentences", "news articles", "product reviews", "web pages"]}),
        ("the {company}'s new {device} is {price} this year",
         {"company": ["startup", "software company", "chip maker", "tech giant"],
          "price": [("cheap", "expensive")], "device": ["phone", "laptop", "tablet", "robot"]}),
        ("attention lets the {model} focus on the most relevant {unit}",
         {"model": ["network", "transformer", "translation model", "encoder"],
          "unit": ["words", "tokens", "pixels", "features"]}),
        ("users can download the {software} from the {source}",
         {"software": ["app", "update", "browser", "driver"],
          "source": ["website", "app store", "server", "cloud"]}),
        ("the {age} version of the {software} crashes when the network is slow",
         {"age": [("new", "old")], "software": ["app", "browser", "operating system", "game"]}),
    ],
    "people": [
        ("this is a {quality} {person}",
         {"quality": [("good", "bad")],
          "person": ["man", "woman", "student", "teacher", "doctor", "neighbour"]}),
        ("the {age} {person} lives alone in the village",
         {"age": [("old", "young")], "person": ["man", "woman", "farmer", "teacher", "doctor"]}),
        ("my {relative} is {wealth} and lives near the {place}",
         {"relative": ["uncle", "aunt", "brother", "sister", "cousin", "grandfather"],
          "wealth": [("rich", "poor")], "place": ["river", "station", "school", "church"]}),
        ("{name} and {name2} went to the party and talked all night",
         {"name": ["john", "mary", "alice", "tom"], "name2": ["bob", "anna", "peter", "lucy"]}),
        ("the {mood} child waved to her {relative} at the station",
         {"mood": [("happy", "sad")], "relative": ["mother", "father", "grandmother", "uncle"]}),
        ("{name} lives in a {size} house with a garden",
         {"name": ["john", "mary", "alice", "tom", "anna"], "size": [("big", "small")]}),
    ],
}

ZH_CLASSICS = [
    ("这是一个好人", "people"),
    ("这是一个坏人", "people"),
    ("张三和李四去宴会，前者一直在聊天，后者不理前者，一直认真品尝美食。", "people"),
    ("那只肥猫坐在垫子上", "animals"),
    ("猫坐在垫子上", "animals"),
    ("国王和王后一起统治这个国家", "people"),
    ("男人和女人一起去市场", "people"),
    ("注意力机制让模型关注句子中最重要的词", "technology"),
]

ZH_TEMPLATES = {
    "animals": [
        ("{size}{animal}坐在{thing}上",
         {"size": [("大", "小")], "animal": ["猫", "狗", "兔子", "鸭子"],
          "thing": ["垫子", "沙发", "床", "椅子", "草地"]}),
        ("一只{color}色的{animal}在{place}里睡觉",
         {"color": [("黑", "白")], "animal": ["猫", "狗", "兔子", "羊", "小鸟"],
          "place": ["院子", "花园", "树林", "田野"]}),
        ("{hunter}在{place}里追着{prey}跑",
         {"hunter": ["猫", "狗", "狐狸", "老鹰"], "prey": ["老鼠", "小鸟", "兔子", "松鼠"],
          "place": ["花园", "农场", "院子", "树林"]}),
        ("这只{animal}跑得很{speed}",
         {"animal": ["小狗", "兔子", "小鹿", "小马", "猫"], "speed": [("快", "慢")]}),
        ("农民家里有一头很{force}的{animal}",
         {"force": [("强壮", "瘦弱")], "animal": ["牛", "驴", "骡子", "水牛"]}),
        ("农民每天早上给{animal}喂{food}",
         {"animal": ["马", "牛", "猪", "鸡", "羊"], "food": ["草", "玉米", "粮食", "苹果"]}),
    ],
    "food": [
        ("妈妈用新鲜的{ingredient}做了{dish}",
         {"ingredient": ["西红柿", "鸡蛋", "豆腐", "白菜", "土豆"],
          "dish": ["汤", "面条", "炒饭", "晚饭", "午饭"]}),
        ("这家饭馆的{dish}很{taste}",
         {"dish": ["饺子", "面条", "包子", "烤鸭", "米饭", "鱼"], "taste": [("好吃", "难吃")]}),
        ("我点了一杯{temp}{drink}和一块{cake}",
         {"temp": [("热", "冷")], "drink": ["茶", "咖啡", "牛奶", "豆浆"],
          "cake": ["蛋糕", "面包", "月饼", "点心"]}),
        ("厨师在{dish}里加了一点{spice}",
         {"dish": ["汤", "面条", "菜", "饺子馅"], "spice": ["盐", "糖", "辣椒", "酱油", "醋"]}),
        ("夏天市场上的{fruit}很{price}",
         {"fruit": ["苹果", "西瓜", "葡萄", "香蕉", "桃子"], "price": [("贵", "便宜")]}),
        ("我们在一家{size}饭馆吃了{dish}",
         {"size": [("大", "小")], "dish": ["火锅", "饺子", "烤鸭", "面条", "米饭"]}),
    ],
    "weather": [
        ("今天{city}的天气很{temp}",
         {"city": ["北京", "上海", "广州", "哈尔滨", "成都", "西安", "重庆"],
          "temp": [("冷", "热")]}),
        ("今年{season}{city}非常{temp}",
         {"season": ["冬天", "夏天", "春天", "秋天"],
          "city": ["北京", "上海", "广州", "哈尔滨", "成都", "西安"], "temp": [("冷", "热")]}),
        ("昨天夜里{city}下了一场{size}{precip}",
         {"city": ["北京", "上海", "哈尔滨", "成都", "西安"], "size": [("大", "小")],
          "precip": ["雨", "雪"]}),
        ("天气预报说明天{region}有{weather}",
         {"region": ["北方", "南方", "沿海地区", "山区"],
          "weather": ["雷阵雨", "大雾", "暴雨", "降雪", "大风"]}),
        ("这几天{city}的气温很{level}",
         {"city": ["北京", "上海", "广州", "哈尔滨", "重庆"], "level": [("高", "低")]}),
        ("{time}{city}的风很{size}",
         {"size": [("大", "小")], "time": ["今天", "昨天", "早上", "晚上"],
          "city": ["北京", "上海", "哈尔滨", "重庆"]}),
    ],
    "sports": [
        ("{team}以{score}战胜了{team2}",
         {"team": ["红队", "主队", "国家队", "校队"], "team2": ["蓝队", "客队", "二队", "青年队"],
          "score": ["二比一", "三比零", "一比零", "四比二"]}),
        ("{force}队在最后一分钟输掉了比赛", {"force": [("强", "弱")]}),
        ("这名{athlete}跑得很{speed}",
         {"athlete": ["运动员", "选手", "队员", "新人", "老将"], "speed": [("快", "慢")]}),
        ("这位{player}在下半场踢得很{quality}",
         {"player": ["前锋", "守门员", "队长", "中场", "后卫"], "quality": [("好", "差")]}),
        ("{athlete}每天早上都要训练，准备参加{competition}",
         {"athlete": ["游泳运动员", "长跑运动员", "篮球运动员", "足球运动员", "乒乓球运动员"],
          "competition": ["奥运会", "全国比赛", "世界杯", "马拉松", "亚运会"]}),
        ("球迷们为{team}赢得{trophy}而欢呼",
         {"team": ["红队", "主队", "国家队", "校队"], "trophy": ["冠军", "奖杯", "联赛冠军"]}),
    ],
    "economy": [
        ("{wealth}国向{lender}借了很多钱",
         {"wealth": [("富", "穷")], "lender": ["世界银行", "国际货币基金组织", "外国银行", "中央银行"]}),
        ("{company}的股票今天{move}了",
         {"company": ["银行", "航空公司", "石油公司", "电力公司", "汽车公司"],
          "move": [("上涨", "下跌")]}),
        ("央行提高了利率来对付{problem}",
         {"problem": ["通货膨胀", "物价上涨", "房价上涨", "货币贬值"]}),
        ("{wealth}人家把大部分收入花在{item}上",
         {"wealth": [("富", "穷")], "item": ["房租", "食物", "教育", "交通", "医疗"]}),
        ("对{market}来说，这是一个{quality}消息",
         {"market": ["股市", "房地产市场", "出口企业", "银行业", "投资者"],
          "quality": [("好", "坏")]}),
        ("这个月{commodity}的价格很{level}",
         {"commodity": ["石油", "黄金", "小麦", "铜", "大米"], "level": [("高", "低")]}),
        ("政府减少了{item}的税收，帮助小企业发展",
         {"item": ["燃油", "进口商品", "利润", "工资", "房产"]}),
    ],
    "technology": [
        ("新{device}的屏幕很{size}",
         {"device": ["手机", "电脑", "平板", "相机", "手表"], "size": [("大", "小")]}),
        ("这台{device}的处理器速度很{speed}",
         {"device": ["电脑", "服务器", "笔记本电脑", "机器"], "speed": [("快", "慢")]}),
        ("工程师用{data}训练了一个{model}",
         {"data": ["大量中文文本", "新闻文章", "用户评论", "网页数据"],
          "model": ["神经网络", "语言模型", "分类器", "翻译模型"]}),
        ("{company}今年发布的{device}很{price}",
         {"company": ["这家公司", "那家创业公司", "这家科技公司", "芯片厂商"],
          "device": ["手机", "电脑", "平板", "机器人"], "price": [("贵", "便宜")]}),
        ("注意力机制让{model}关注最重要的{unit}",
         {"model": ["网络", "翻译模型", "编码器", "语言模型"],
          "unit": ["词", "字", "信息", "特征"]}),
        ("用户可以从{source}下载{software}",
         {"source": ["官网", "应用商店", "服务器", "云端"],
          "software": ["应用", "更新", "浏览器", "输入法"]}),
        ("{place}的手机信号很{force}",
         {"place": ["地铁里", "山区", "办公室", "地下室", "火车上"], "force": [("强", "弱")]}),
        ("{age}版本的{software}在网络很慢时会崩溃",
         {"age": [("新", "旧")], "software": ["应用", "浏览器", "操作系统", "游戏"]}),
    ],
    "people": [
        ("他是一个{quality}{person}",
         {"quality": [("好", "坏")], "person": ["人", "学生", "老师", "医生", "邻居", "孩子"]}),
        ("{name}住在一个{size}房子里",
         {"name": ["张三", "李四", "王五", "小明", "小红"], "size": [("大", "小")]}),
        ("我{relative}家很{wealth}",
         {"relative": ["叔叔", "阿姨", "舅舅", "姑姑", "表哥", "爷爷"], "wealth": [("富", "穷")]}),
        ("{name}和{name2}一起去参加宴会",
         {"name": ["张三", "小明", "王五", "老王"], "name2": ["李四", "小红", "赵六", "小李"]}),
        ("那个孩子今天在{place}里很{mood}",
         {"mood": [("高兴", "难过")], "place": ["学校", "家", "公园", "教室"]}),
        ("{name}的{relative}是一位{age}医生",
         {"name": ["张三", "李四", "小明", "小红"], "relative": ["父亲", "母亲", "哥哥", "姐姐"],
          "age": [("年老的", "年轻的")]}),
    ],
}


def _expand(template, slots, rng):
    """Sentences from one template: FILLS_PER_TEMPLATE random fills, each antonym slot doubled."""
    names = sorted(slots)
    combos = list(itertools.product(*(slots[name] for name in names)))
    rng.shuffle(combos)
    sentences = []
    for combo in combos[:FILLS_PER_TEMPLATE]:
        choices = [value if isinstance(value, tuple) else (value,) for value in combo]
        for variant in itertools.product(*choices):   # both members of each antonym pair
            sentences.append(template.format(**dict(zip(names, variant))))
    return sentences


def build(classics, templates, seed=SEED):
    """Classic sentences first, then the templated ones shuffled, without duplicates."""
    rng = random.Random(seed)
    rows, seen = list(classics), {sentence for sentence, _ in classics}
    generated = []
    for topic, topic_templates in templates.items():
        for template, slots in topic_templates:
            for sentence in _expand(template, slots, rng):
                if sentence not in seen:
                    seen.add(sentence)
                    generated.append((sentence, topic))
    rng.shuffle(generated)
    return rows + generated


def main():
    here = Path(__file__).resolve().parent
    for name, (classics, templates) in {
        "toy_en.txt": (EN_CLASSICS, EN_TEMPLATES),
        "toy_zh.txt": (ZH_CLASSICS, ZH_TEMPLATES),
    }.items():
        rows = build(classics, templates)
        text = "".join(f"{sentence}\t{topic}\n" for sentence, topic in rows)
        (here / name).write_text(text, encoding="utf-8")
        print(f"{name}: {len(rows)} sentences")


if __name__ == "__main__":
    main()
