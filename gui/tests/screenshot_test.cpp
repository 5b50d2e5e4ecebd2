// `partsim-gui --screenshot out.png SCENARIO` renders the main window after a run to a non-trivial PNG.
#include <QImage>
#include <QProcess>
#include <QSet>
#include <QTemporaryDir>
#include <QtTest>

class ScreenshotTest : public QObject {
  Q_OBJECT

 private slots:
  void renders_the_window_to_png() {
    QTemporaryDir dir;
    const QString out = dir.filePath(QStringLiteral("window.png"));
    QProcess gui;
    gui.setProcessChannelMode(QProcess::MergedChannels);
    gui.start(QStringLiteral(PARTSIM_GUI_EXE),
              {QStringLiteral("--screenshot"), out, QStringLiteral("--size"), QStringLiteral("1400x850"),
               QStringLiteral(PARTSIM_SOURCE_DIR "/scenarios/seed-1-skewed-partitions.json")});
    QVERIFY(gui.waitForFinished(90000));
    QVERIFY2(gui.exitCode() == 0, gui.readAll().constData());
    const QImage image(out);
    QVERIFY(!image.isNull());
    QCOMPARE(image.size(), QSize(1400, 850));
    // Non-trivial: many distinct colours (text, bars, table), not a blank or single-colour window.
    QSet<QRgb> colours;
    for (int y = 0; y < image.height(); y += 4)
      for (int x = 0; x < image.width(); x += 4) colours.insert(image.pixel(x, y));
    QVERIFY2(colours.size() > 50, qPrintable(QString::number(colours.size())));
    // The bars' compute colour is present: the chart was drawn with data.
    QVERIFY(colours.contains(qRgb(0x3b, 0x7d, 0xd8)));
  }

  void refuses_a_bad_scenario() {
    QTemporaryDir dir;
    QProcess gui;
    gui.start(QStringLiteral(PARTSIM_GUI_EXE), {QStringLiteral("--screenshot"), dir.filePath(QStringLiteral("x.png")),
                                                dir.filePath(QStringLiteral("missing.json"))});
    QVERIFY(gui.waitForFinished(30000));
    QCOMPARE(gui.exitCode(), 2);
  }
};

QTEST_MAIN(ScreenshotTest)
#include "screenshot_test.moc"
